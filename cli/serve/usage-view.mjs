// The usage page of `roo-state serve`: a store's usage report (`TaskStore.usageReport`) as a chart
// drawn here in SVG (attributes only: the page's policy runs no script and allows no inline style)
// and a table with totals.
import { COST_MODES, tokens as tokensOf } from '../lib/usage.mjs'
import { Safe, count, html, layout, money, storeTabs } from './views.mjs'

export const USAGE_GROUPS = ['daily', 'weekly', 'monthly', 'models', 'workspaces', 'modes', 'hosts', 'conversations']
const TIME_GROUPS = ['daily', 'weekly', 'monthly']
/** Rows a bar chart of names shows (the table below has them all). */
const NAMED_BARS = 25

/** Tokens in short form (1.23M), as the CLI's compact tables show them. */
const tokens = (n) => tokensOf(n, true)

/** What the bars measure: the cost, or the tokens when nothing cost. */
function measureOf(report) {
  return report.totals.cost > 0 ? { name: 'cost', of: (r) => r.cost, text: money } : { name: 'tokens', of: (r) => r.totalTokens, text: tokens }
}

/** Columns over time (days, weeks or months in order), one per row, with the key under every few. */
function columns(report, m) {
  const rows = report.rows
  const max = Math.max(...rows.map(m.of), 0) || 1
  const w = Math.max(3, Math.min(40, Math.floor(900 / Math.max(rows.length, 1))))
  const [top, H] = [18, 180]
  const every = Math.ceil(rows.length / 12)
  const bars = rows.map((r, i) => {
    const h = Math.round((m.of(r) / max) * H)
    return html`<g><title>${r.key}: ${m.text(m.of(r))}, ${count(r.requests)} requests</title><rect class="bar" x="${i * w}" y="${top + H - h}" width="${Math.max(1, w - 1)}" height="${h}"></rect></g>${i % every === 0 ? html`<text class="axis" x="${i * w}" y="${top + H + 14}">${r.key}</text>` : ''}`
  })
  const [width, height] = [Math.max(rows.length * w, 200) + 60, top + H + 20]
  return html`<svg class="chart" id="usage-chart" role="img" aria-label="${m.name} per ${report.group}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" preserveAspectRatio="xMinYMin meet">${bars}<text class="axis" x="0" y="12">${m.name}, max ${m.text(max)}</text></svg>`
}

/** Horizontal bars of the largest rows, by name. */
function namedBars(report, m) {
  const rows = report.rows.slice(0, NAMED_BARS)
  const max = Math.max(...rows.map(m.of), 0) || 1
  const label = (r) => {
    const k = r.label ? `${r.label} (${r.key.slice(0, 8)})` : r.key
    return k.length > 48 ? `${k.slice(0, 47)}…` : k
  }
  const bars = rows.map((r, i) => {
    const wd = Math.round((m.of(r) / max) * 520)
    return html`<g><title>${r.key}: ${m.text(m.of(r))}, ${count(r.requests)} requests</title><text class="axis" x="0" y="${i * 22 + 14}">${label(r)}</text><rect class="bar" x="300" y="${i * 22 + 3}" width="${Math.max(1, wd)}" height="16"></rect><text class="axis" x="${306 + wd}" y="${i * 22 + 15}">${m.text(m.of(r))}</text></g>`
  })
  return html`<svg class="chart" id="usage-chart" role="img" aria-label="${m.name} per ${report.group}" width="920" height="${rows.length * 22 + 4}" viewBox="0 0 920 ${rows.length * 22 + 4}" preserveAspectRatio="xMinYMin meet">${bars}</svg>`
}

function table(report) {
  const cells = (s) => html`<td>${count(s.requests)}</td><td>${tokens(s.tokensIn)}</td><td>${tokens(s.tokensOut)}</td><td>${tokens(s.cacheWrites)}</td><td>${tokens(s.cacheReads)}</td><td>${money(s.cost)}</td>`
  const rows = report.rows.map((r) => html`<tr><th scope="row">${r.label ? html`${r.label} <code>${r.key.slice(0, 8)}</code>` : r.key}</th>${cells(r)}</tr>`)
  return html`<table class="usage" id="usage-table"><thead><tr><th></th><th>Requests</th><th>Input</th><th>Output</th><th>Cache write</th><th>Cache read</th><th>Cost</th></tr></thead>
<tbody>${rows}</tbody><tfoot><tr><th scope="row">Total</th>${cells(report.totals)}</tr></tfoot></table>`
}

/** The usage page: the store tabs, the report's options, its chart and its table. */
export function usagePage(base, { stores, store, query, report, error }) {
  const keep = { store, group: query.group, since: query.since, until: query.until, tz: query.timeZone, cost: query.costMode }
  const tabs = storeTabs(`${base}usage`, stores, store, keep)
  const option = (v, cur) => html`<option value="${v}"${v === cur ? new Safe(' selected') : ''}>${v}</option>`
  const form = html`<form class="filters" method="get" action="${base}usage">
<input type="hidden" name="store" value="${store}">
<label>By <select name="group">${USAGE_GROUPS.map((g) => option(g, query.group))}</select></label>
<label>From <input type="date" name="since" value="${query.since ?? ''}"></label>
<label>to <input type="date" name="until" value="${query.until ?? ''}"></label>
<label>Time zone <input name="tz" value="${query.timeZone ?? ''}" placeholder="UTC, Europe/Paris, +02:00"></label>
<label>Cost <select name="cost">${COST_MODES.map((c) => option(c, query.costMode ?? 'auto'))}</select></label>
<button type="submit">Show</button></form>`
  if (error) return layout(base, 'Usage', 'Usage', html`${tabs}${form}<p class="error" id="usage-error">${error.code}: ${error.message}</p>`)
  const m = measureOf(report)
  const chart = report.rows.length === 0 ? html`<p>No request in this range.</p>` : TIME_GROUPS.includes(report.group) ? columns(report, m) : namedBars(report, m)
  const noCost = report.noRecordedCost.length
  const body = html`${tabs}${form}
<p class="summary" id="usage-summary"><span id="usage-cost">${money(report.totals.cost)}</span> over <span id="usage-requests">${count(report.totals.requests)}</span> requests and ${tokens(report.totals.totalTokens)} tokens, ${count(report.totals.tasks)} tasks (${report.timeZone}, cost ${report.costMode})${noCost ? html`; ${count(noCost)} tasks recorded no cost for some requests` : ''}.</p>
${chart}${table(report)}<ul class="notes">${report.notes.map((n) => html`<li>${n}</li>`)}</ul>`
  return layout(base, 'Usage', 'Usage', body)
}
