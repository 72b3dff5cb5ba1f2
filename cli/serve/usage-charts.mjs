// The charts of the usage page, SVG drawn on the server (attributes and classes only: the page's
// policy runs no script and allows no inline style). Over time: one slot per calendar period
// from the first to the last with usage (an empty day is an empty slot), each period's cost or
// tokens stacked by model or mode, with a legend; each segment says its value as its <title>
// (the hover text). By name: horizontal bars. A conversation: its cost by mode and by subtask.
import { tokens as tokensOf } from '../lib/usage.mjs'
import { html, money, count } from './views.mjs'

/** Series drawn in their own colour (the rest are one "other" series). */
const SERIES = 8
const tokens = (n) => tokensOf(n, true)

/** The measures a chart can draw. */
export const MEASURES = {
  cost: { name: 'cost', of: (s) => s.cost, text: money },
  tokens: { name: 'tokens', of: (s) => s.totalTokens, text: tokens },
}

// ---- Calendar periods ---------------------------------------------------------------------------

const DAY = 86_400_000
const dayMs = (key) => Date.parse(`${key}T00:00:00Z`)
const dayKey = (ms) => new Date(ms).toISOString().slice(0, 10)

/** The key of the period after `key`. */
function nextKey(group, key) {
  if (group === 'daily') return dayKey(dayMs(key) + DAY)
  if (group === 'weekly') return dayKey(dayMs(key) + 7 * DAY)
  if (group === 'monthly') {
    const [y, m] = key.split('-').map(Number)
    return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`
  }
  return String(Number(key) + 1).padStart(4, '0')
}

/** Every period from `first` to `last` (keys as the report gives them), at most `max`. */
export function calendar(group, first, last, max = 4000) {
  const out = [first]
  while (out[out.length - 1] < last && out.length < max) out.push(nextKey(group, out[out.length - 1]))
  return out
}

/** The first and last day of a period (for a link to the tasks of that period). */
export function periodRange(group, key) {
  if (group === 'daily') return [key, key]
  if (group === 'weekly') return [key, dayKey(dayMs(key) + 6 * DAY)]
  if (group === 'monthly') {
    const next = nextKey('monthly', key)
    return [`${key}-01`, dayKey(dayMs(`${next}-01`) - DAY)]
  }
  return [`${key}-01-01`, `${key}-12-31`]
}

/** Whether an axis label goes under period `key` (the first of each month, or of each year). */
function labelled(group, key, i, total) {
  if (i === 0) return true
  if (group === 'daily') return key.endsWith('-01') && (total < 400 || key.slice(5, 7) % 3 === 1)
  if (group === 'weekly') return key.slice(8, 10) <= '07' && (total < 120 || key.slice(5, 7) % 3 === 1)
  if (group === 'monthly') return total <= 24 || key.endsWith('-01')
  return true
}

// ---- Series and legend --------------------------------------------------------------------------

/** The parts of a row the chart stacks (its models or modes; the row whole when none). */
const partsOf = (row) => (row.models ?? []).map((m) => ({ name: m.model, s: m })).concat((row.modes ?? []).map((m) => ({ name: m.mode, s: m })))

/**
 * The series of a report's rows, most expensive first (then most tokens): the first ones each in
 * a colour class `s0…`, the rest as `other`.
 */
export function seriesOf(rows) {
  const total = new Map()
  for (const r of rows) {
    for (const p of partsOf(r)) {
      const t = total.get(p.name) ?? { cost: 0, tokens: 0 }
      t.cost += p.s.cost
      t.tokens += p.s.totalTokens
      total.set(p.name, t)
    }
  }
  const names = [...total.entries()].sort((a, b) => b[1].cost - a[1].cost || b[1].tokens - a[1].tokens || a[0].localeCompare(b[0])).map(([n]) => n)
  const cls = new Map(names.map((n, i) => [n, i < SERIES ? `s${i}` : 'sother']))
  const shown = names.slice(0, SERIES).map((n) => ({ name: n, cls: cls.get(n) }))
  if (names.length > SERIES) shown.push({ name: `${names.length - SERIES} other${names.length - SERIES === 1 ? '' : 's'}`, cls: 'sother' })
  return { cls: (name) => cls.get(name) ?? 'sother', shown }
}

/** The legend of a chart's series (swatches are classes too). */
export function legend(series, id) {
  return html`<ul class="legend" id="${id}">${series.shown.map((s) => html`<li><span class="swatch ${s.cls}"></span>${s.name}</li>`)}</ul>`
}

// ---- Over time ----------------------------------------------------------------------------------

/**
 * Columns over the calendar: one slot per period from the first row's to the last's, each period
 * stacked by its parts (or whole), every segment with its value as hover text.
 */
export function calendarChart(report, m, series, { id, by }) {
  const rows = new Map(report.rows.map((r) => [r.key, r]))
  const keys = report.rows.length ? calendar(report.group, report.rows[0].key, report.rows[report.rows.length - 1].key) : []
  const max = Math.max(...report.rows.map(m.of), 0) || 1
  const plot = 900
  const w = Math.max(1, Math.min(40, plot / Math.max(keys.length, 1)))
  const [top, H, left] = [22, 180, 56]
  const x = (i) => left + i * w
  const y = (v) => top + H - (v / max) * H
  const slots = keys.map((key, i) => {
    const r = rows.get(key)
    const label = labelled(report.group, key, i, keys.length) ? html`<line class="tick" x1="${x(i)}" y1="${top + H}" x2="${x(i)}" y2="${top + H + 4}"></line><text class="axis" x="${x(i)}" y="${top + H + 16}">${key}</text>` : ''
    if (!r) return html`<g class="period empty" data-key="${key}"><title>${key}: no usage</title><rect class="slot" x="${x(i)}" y="${top}" width="${w}" height="${H}"></rect></g>${label}`
    const parts = partsOf(r)
    const stack = parts.length ? parts : [{ name: by === 'none' ? 'all' : 'unknown', s: r }]
    let base = 0
    const segs = stack.map((p) => {
      const v = m.of(p.s)
      const h = (v / max) * H
      const seg = html`<g class="seg"><title>${key} · ${p.name}: ${m.text(v)}, ${count(p.s.requests)} requests</title><rect class="${parts.length ? series.cls(p.name) : 's0'}" x="${x(i)}" y="${y(base + v)}" width="${Math.max(0.5, w - (w > 3 ? 1 : 0))}" height="${h}"></rect></g>`
      base += v
      return seg
    })
    return html`<g class="period" data-key="${key}"><title>${key}: ${m.text(m.of(r))}, ${count(r.requests)} requests</title><rect class="slot" x="${x(i)}" y="${top}" width="${w}" height="${H}"></rect>${segs}</g>${label}`
  })
  const width = Math.max(left + keys.length * w, 300) + 70
  const height = top + H + 22
  const grid = [0.5, 1].map((f) => html`<line class="grid" x1="${left}" y1="${y(max * f)}" x2="${width - 10}" y2="${y(max * f)}"></line><text class="axis" x="0" y="${y(max * f) + 4}">${m.text(max * f)}</text>`)
  return html`<svg class="chart" id="${id}" role="img" aria-label="${m.name} per ${report.group.replace(/ly$/, '').replace('dai', 'day')}, ${keys.length} periods" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" preserveAspectRatio="xMinYMin meet">${grid}${slots}<line class="base" x1="${left}" y1="${top + H}" x2="${width - 10}" y2="${top + H}"></line><text class="axis" x="${left}" y="12">${m.name}</text></svg>`
}

// ---- By name ------------------------------------------------------------------------------------

/** Horizontal bars of the largest rows, by name (`label(row)` gives each bar's text). */
export function namedBars(rows, m, { id, label, limit = 25 }) {
  const shown = rows.slice(0, limit)
  const max = Math.max(...shown.map(m.of), 0) || 1
  const bars = shown.map((r, i) => {
    const wd = Math.round((m.of(r) / max) * 520)
    return html`<g><title>${r.key}: ${m.text(m.of(r))}, ${count(r.requests)} requests</title><text class="axis" x="0" y="${i * 22 + 14}">${label(r)}</text><rect class="bar" x="300" y="${i * 22 + 3}" width="${Math.max(1, wd)}" height="16"></rect><text class="axis" x="${306 + wd}" y="${i * 22 + 15}">${m.text(m.of(r))}</text></g>`
  })
  return html`<svg class="chart" id="${id}" role="img" aria-label="${m.name} per row" width="920" height="${shown.length * 22 + 4}" viewBox="0 0 920 ${shown.length * 22 + 4}" preserveAspectRatio="xMinYMin meet">${bars}</svg>`
}

// ---- Conversations ------------------------------------------------------------------------------

/** The conversations as bars of their cost (or tokens), each split by mode. */
export function conversationsChart(report, m, modes, { id, label }) {
  const rows = report.rows.slice(0, 25)
  const max = Math.max(...rows.map(m.of), 0) || 1
  const bars = rows.map((r, i) => {
    const whole = m.of(r)
    let at = 300
    const segs = (r.conversation?.modes ?? []).map((md) => {
      const v = whole > 0 ? md.share * whole : 0
      const wd = (v / max) * 520
      const seg = html`<g class="seg"><title>${label(r)} · ${md.mode}: ${m.text(v)} (${Math.round(md.share * 100)}%)</title><rect class="${modes.cls(md.mode)}" x="${at}" y="${i * 22 + 3}" width="${Math.max(0.5, wd)}" height="16"></rect></g>`
      at += wd
      return seg
    })
    return html`<g><text class="axis" x="0" y="${i * 22 + 14}">${label(r)}</text>${segs}<text class="axis" x="${at + 6}" y="${i * 22 + 15}">${m.text(whole)}</text></g>`
  })
  return html`<svg class="chart" id="${id}" role="img" aria-label="${m.name} per conversation, by mode" width="920" height="${rows.length * 22 + 4}" viewBox="0 0 920 ${rows.length * 22 + 4}" preserveAspectRatio="xMinYMin meet">${bars}</svg>`
}

/** One conversation: a bar per task (indented by depth, in its mode's colour), root first. */
export function subtasksChart(row, m, modes, { id }) {
  const tasks = row.conversation?.tasks ?? []
  const max = Math.max(...tasks.map(m.of), 0) || 1
  const bars = tasks.map((t, i) => {
    const wd = Math.round((m.of(t) / max) * 480)
    const name = `${'· '.repeat(t.depth)}${t.title ? t.title.slice(0, 34) : t.taskId.slice(0, 8)}`
    return html`<g class="seg"><title>${t.taskId} (${t.mode ?? 'no mode'}): ${m.text(m.of(t))}, ${Math.round(t.share * 100)}% of the conversation, ${count(t.requests)} requests</title><text class="axis" x="0" y="${i * 22 + 14}">${name}</text><rect class="${modes.cls(t.mode ?? 'unknown')}" x="340" y="${i * 22 + 3}" width="${Math.max(1, wd)}" height="16"></rect><text class="axis" x="${346 + wd}" y="${i * 22 + 15}">${m.text(m.of(t))} · ${t.mode ?? '?'}</text></g>`
  })
  return html`<svg class="chart" id="${id}" role="img" aria-label="${m.name} per subtask" width="920" height="${tasks.length * 22 + 4}" viewBox="0 0 920 ${tasks.length * 22 + 4}" preserveAspectRatio="xMinYMin meet">${bars}</svg>`
}

/** One conversation's cost (or tokens) as one bar split by mode, each part with its share. */
export function modeShareChart(row, m, modes, { id }) {
  const whole = m.of(row)
  let at = 0
  const parts = (row.conversation?.modes ?? []).map((md) => {
    const wd = md.share * 760
    const v = whole > 0 ? md.share * whole : 0
    const seg = html`<g class="seg"><title>${md.mode}: ${m.text(v)} (${Math.round(md.share * 100)}%)</title><rect class="${modes.cls(md.mode)}" x="${at}" y="2" width="${Math.max(0.5, wd)}" height="20"></rect>${wd > 70 ? html`<text class="inside" x="${at + 5}" y="16">${md.mode} ${Math.round(md.share * 100)}%</text>` : ''}</g>`
    at += wd
    return seg
  })
  return html`<svg class="chart" id="${id}" role="img" aria-label="${m.name} of the conversation by mode" width="920" height="26" viewBox="0 0 920 26" preserveAspectRatio="xMinYMin meet">${parts}<text class="axis" x="${at + 8}" y="16">${m.text(whole)}</text></svg>`
}

/** The modes of conversation rows as series (most expensive first), for their colours. */
export function modeSeries(rows) {
  return seriesOf(rows.map((r) => ({ modes: (r.conversation?.modes ?? []).map((md) => ({ mode: md.mode, cost: md.cost, totalTokens: md.totalTokens, requests: 0 })) })))
}
