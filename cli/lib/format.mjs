// Small text helpers shared by the CLI and the MCP server's text answers.
import path from 'node:path'

/** `2026-03-10 08:12` (UTC) from an ISO string or ms; '' when there is no date. */
export function shortDate(value) {
  if (value === undefined || value === null || value === '') return ''
  const d = typeof value === 'number' ? new Date(value) : new Date(String(value))
  if (Number.isNaN(d.getTime())) return String(value)
  return d.toISOString().slice(0, 16).replace('T', ' ')
}

/** First line of a text, whitespace folded, cut to `n` characters with an ellipsis. */
export function oneLine(text, n = 80) {
  if (text === undefined || text === null) return ''
  const first = String(text).split(/\r?\n/).find((l) => l.trim() !== '') ?? ''
  const folded = first.replace(/\s+/g, ' ').trim()
  return cut(folded, n)
}

/** Cut to `n` code points with `…`. */
export function cut(text, n) {
  const chars = Array.from(text)
  if (n <= 0 || chars.length <= n) return text
  return `${chars.slice(0, Math.max(1, n - 1)).join('')}…`
}

/** A path shown relative to `cwd` when it lies inside it. */
export function shownPath(p, cwd = process.cwd()) {
  const rel = path.relative(cwd, p)
  if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) return rel.split(path.sep).join('/')
  return p
}

export function bytes(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '?'
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let v = n
  let i = 0
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return i === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 0 : 1)} ${units[i]}`
}

/**
 * `n` and the word for it: `1 task`, `3 tasks` (the number as `fmt` writes it).
 * @param {number} n
 * @param {string} word
 * @param {string} [many]
 * @param {(n: number) => string} [fmt]
 */
export function plural(n, word, many = `${word}s`, fmt = String) {
  return `${fmt(n)} ${n === 1 ? word : many}`
}

/** Digits grouped by three with commas (written here: Intl's first call costs a CLI run 10 ms). */
function grouped(digits) {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',')
}

/** A whole number with thousands separators: 1,234,567. */
export function count(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return String(n ?? '')
  const r = Math.round(n)
  return `${r < 0 ? '-' : ''}${grouped(String(Math.abs(r)))}`
}

/** US dollars with two decimals and thousands separators: 1,234.57. */
export function usd(n) {
  const v = Number.isFinite(n) ? n : 0
  // toFixed writes 1e21 and above in exponent form; such a figure has no cents to show.
  const [whole, cents] = Math.abs(v) < 1e21 ? Math.abs(v).toFixed(2).split('.') : [BigInt(Math.abs(v)).toString(), '00']
  return `${v < 0 && Number(v.toFixed(2)) !== 0 ? '-' : ''}${grouped(whole)}.${cents}`
}

/**
 * A number for a file (CSV, TSV): every decimal it means and no float noise of the sums that
 * made it (12.56977635, not 12.569776350000009), never in exponent notation.
 */
export function exact(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return n === undefined || n === null ? '' : String(n)
  const v = Number(n.toPrecision(15))
  const s = String(v)
  return /e/i.test(s) ? v.toFixed(20).replace(/\.?0+$/, '') : s
}

/** A plain text table: rows of cells, left-aligned, two spaces between columns. */
export function table(header, rows) {
  const all = [header, ...rows].map((r) => r.map((c) => (c === undefined || c === null ? '' : String(c))))
  const widths = header.map((_, i) => Math.max(...all.map((r) => Array.from(r[i] ?? '').length)))
  return all
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c + ' '.repeat(widths[i] - Array.from(c).length)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

/** How the parent link of a task was established, in words. */
export function evidenceText(ev) {
  if (!ev) return ''
  let text
  switch (ev.source) {
    case 'history_item':
      text = 'parent stored in history_item.json'
      break
    case 'child_ids':
      text = "listed in the parent's childIds"
      break
    case 'task_metadata':
      text = 'parent stored in task_metadata.json'
      break
    case 'instruction_prefix': {
      const parts = []
      if (ev.matchKind) parts.push(`${ev.matchKind} match`)
      if (typeof ev.gapMs === 'number') parts.push(`${formatGap(ev.gapMs)} after the call`)
      parts.push(`confidence ${Number(ev.confidence).toFixed(2)}`)
      text = `inferred from the parent's new_task message (${parts.join(', ')})`
      break
    }
    default:
      text = `${ev.source} (confidence ${ev.confidence})`
  }
  if (ev.source !== 'instruction_prefix' && typeof ev.confidence === 'number' && ev.confidence < 1) {
    text += ` (confidence ${ev.confidence.toFixed(2)})`
  }
  if (Array.isArray(ev.conflicts) && ev.conflicts.length) text += `; other candidates: ${ev.conflicts.join(', ')}`
  return text
}

function formatGap(ms) {
  const s = Math.round(ms / 1000)
  if (Math.abs(s) < 60) return `${s}s`
  const m = Math.round(s / 60)
  if (Math.abs(m) < 60) return `${m}min`
  return `${(m / 60).toFixed(1)}h`
}
