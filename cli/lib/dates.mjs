// Days as a person types them on the command line: `2026-11-01`, `20261101`, or relative to today
// (`7d`, `2w`, `3m`, `1y`: that many days, weeks, months or years before today; `today`,
// `yesterday`), today being the day it is in the time zone at hand.
import { usageError } from './errors.mjs'

/** Today (YYYY-MM-DD) in `timeZone` (an IANA name, `UTC`, or an offset such as `+02:00`; default the local zone). */
export function today(timeZone, now = Date.now()) {
  const offset = /^([+-])(\d{2}):?(\d{2})$/.exec(timeZone ?? '')
  if (offset) {
    const ms = (Number(offset[2]) * 60 + Number(offset[3])) * 60_000 * (offset[1] === '-' ? -1 : 1)
    return new Date(now + ms).toISOString().slice(0, 10)
  }
  if (timeZone) {
    try {
      return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now)
    } catch {
      throw usageError(`"${timeZone}" is not a time zone (an IANA name such as Europe/Paris, UTC, or an offset such as +02:00).`)
    }
  }
  const d = new Date(now)
  return civil(d.getFullYear(), d.getMonth() + 1, d.getDate())
}

function civil(y, m, d) {
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`
}

/** Whether y-m-d is a day of the calendar. */
function exists(y, m, d) {
  const t = new Date(Date.UTC(y, m - 1, d))
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d
}

/** `day` (YYYY-MM-DD) moved by days, or by months (the day kept within the month it lands in). */
function shift(day, { days = 0, months = 0 }) {
  const [y, m, d] = day.split('-').map(Number)
  const first = new Date(Date.UTC(y, m - 1 + months, 1))
  const last = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 0)).getUTCDate()
  const t = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), Math.min(d, last) + days))
  return t.toISOString().slice(0, 10)
}

/**
 * The day a `--since`/`--until` value names, as YYYY-MM-DD; `undefined` when not given. Throws a
 * usage error naming the option for anything else.
 */
export function dayOf(value, option, { timeZone, now } = /** @type {{timeZone?: string, now?: number}} */ ({})) {
  if (value === undefined) return undefined
  const v = String(value).trim().toLowerCase()
  let m = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(v)
  if (m && exists(Number(m[1]), Number(m[2]), Number(m[3]))) return `${m[1]}-${m[2]}-${m[3]}`
  if (v === 'today') return today(timeZone, now)
  if (v === 'yesterday') return shift(today(timeZone, now), { days: -1 })
  m = /^(\d{1,5})\s*(d|w|m|y)$/.exec(v)
  if (m) {
    const n = Number(m[1])
    const base = today(timeZone, now)
    return m[2] === 'd' ? shift(base, { days: -n }) : m[2] === 'w' ? shift(base, { days: -7 * n }) : shift(base, { months: m[2] === 'm' ? -n : -12 * n })
  }
  throw usageError(`--${option} takes a day: YYYY-MM-DD, YYYYMMDD, or days, weeks, months or years before today (7d, 2w, 3m, 1y, today, yesterday); not "${value}".`)
}

/** `since` and `until` as days, refused when the range is reversed. */
export function dayRange(opts, { timeZone, now } = /** @type {{timeZone?: string, now?: number}} */ ({})) {
  const since = dayOf(opts.since, 'since', { timeZone, now })
  const until = dayOf(opts.until, 'until', { timeZone, now })
  if (since && until && since > until) {
    throw usageError(`The range is reversed: --since ${since} is after --until ${until}.`)
  }
  return { since, until }
}

/** The first instant (ms) of a local day, and the first of the day after it. */
export function localDayBounds(day) {
  const [y, m, d] = day.split('-').map(Number)
  return [new Date(y, m - 1, d).getTime(), new Date(y, m - 1, d + 1).getTime()]
}
