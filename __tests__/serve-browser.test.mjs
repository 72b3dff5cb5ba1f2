// `roo-state serve` in a real browser (headless Chromium through playwright-core): the tree of a
// bundled store, a conversation expanded, a task opened, a search followed to its message, and a
// task with hostile texts that must run nothing. One screenshot per page in test-output/serve/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import { CHROMIUM, launchChromium } from '../scripts/chromium.mjs'
import { startServer } from '../cli/serve/server.mjs'
import { HOSTILE_ID, HOSTILE_REPLY, HOSTILE_TITLE, fixtureStore, makeServeRoot, repoRoot } from './serve-helpers.mjs'

const haveBrowser = fs.existsSync(CHROMIUM)
if (!haveBrowser) {
  // CI installs Debian's chromium (.ci/run) and sets ROO_STATE_REQUIRE_BROWSER=1: there it must run.
  if (process.env.ROO_STATE_REQUIRE_BROWSER === '1') throw new Error(`ROO_STATE_REQUIRE_BROWSER=1 but ${CHROMIUM} is absent`)
  console.warn(`[serve-browser] skipped: ${CHROMIUM} is absent (apt-get install chromium)`)
}

const out = path.join(repoRoot, 'test-output', 'serve')
const ROOT = '019cd6ce-1c9e-7be9-a324-5dcc53ca83b6'

describe.skipIf(!haveBrowser)('roo-state serve in Chromium', () => {
  let env
  let server
  let browser
  let page
  const dialogs = []

  beforeAll(async () => {
    fs.mkdirSync(out, { recursive: true })
    env = makeServeRoot()
    server = await startServer({ tasksDirs: [env.tasksDir], cacheDir: env.cacheDir, indexDir: env.indexDir, embedder: { kind: 'none' } })
    const report = await server.data.index()
    expect(report.tasksSeen).toBe(5)
    browser = await launchChromium()
    page = await browser.context.newPage()
    page.on('dialog', (d) => {
      dialogs.push(d.message())
      d.dismiss().catch(() => {})
    })
  })

  afterAll(async () => {
    await browser?.close()
    await server?.close()
    if (env) fs.rmSync(env.root, { recursive: true, force: true })
  })

  const shot = (name) => page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true })

  it('shows the tree of the store and expands a conversation', async () => {
    await page.goto(server.url)
    expect(await page.title()).toBe('Tasks · roo-state')
    expect(await page.textContent('#conversations')).toBe('2')
    expect(await page.textContent('#shown-tasks')).toBe('5')
    expect(await page.textContent('.stores')).toContain(env.tasksDir)
    const child = page.locator('a.title', { hasText: "Documente l'option --no-cache" })
    expect(await child.isVisible()).toBe(false)
    await shot('tree')
    // Expand the orchestrator's conversation (its summary, not its title link).
    await page.locator('.tree > li > details > summary .kids').first().click()
    expect(await child.isVisible()).toBe(true)
    // The link's evidence is the row's hover text.
    const evidence = await page.locator('.row', { has: child }).locator('.link').getAttribute('title')
    expect(evidence).toContain("listed in the parent's childIds")
    await child.hover()
    await shot('tree-expanded')
    // Collapse again.
    await page.locator('.tree > li > details > summary .kids').first().click()
    expect(await child.isVisible()).toBe(false)
  })

  it('opens a task: figures, folded tool calls, parent and subtasks linked', async () => {
    await page.goto(server.url)
    await page.locator('.tree > li > details > summary .kids').first().click()
    await page.locator('a.title', { hasText: 'Ajoute un cache local des prévisions' }).click()
    expect(page.url()).toBe(`${server.url}task/019cd6ce-5036-7f70-a11e-7f86d559ebe2`)
    expect(await page.textContent('h1')).toBe('Ajoute un cache local des prévisions à meteo-cli.')
    expect(await page.textContent('#message-count')).toBe('5')
    expect(await page.textContent('#subtask-count')).toBe('1')
    expect(await page.textContent('#tokens')).toMatch(/in · .* out/)
    // Tool calls are folded until opened.
    const fold = page.locator('details.tools').first()
    expect(await fold.locator('pre').first().isVisible()).toBe(false)
    await fold.locator('summary').click()
    expect(await fold.locator('pre').first().isVisible()).toBe(true)
    await shot('task')
    // Up to the parent through its link, which lists both subtasks.
    await page.locator('.facts a', { hasText: ROOT }).click()
    expect(page.url()).toBe(`${server.url}task/${ROOT}`)
    expect(await page.textContent('#subtask-count')).toBe('2')
    expect(await page.locator('.subtasks a.title').count()).toBe(2)
    expect(await page.textContent('#cost')).toBe('$0.1426')
  })

  it('searches and follows a result to its message', async () => {
    await page.goto(`${server.url}search`)
    await page.fill('input[name=q]', 'test_cache_expiry')
    await page.selectOption('select[name=mode]', 'lexical')
    await page.click('button[type=submit]')
    expect(new URL(page.url()).searchParams.get('q')).toBe('test_cache_expiry')
    const results = Number(await page.textContent('#result-count'))
    expect(results).toBeGreaterThan(0)
    expect(await page.locator('.results > li').count()).toBe(results)
    const first = page.locator('a.snippet').first()
    expect(await first.textContent()).toMatch(/test_cache_expiry/)
    await shot('search')
    const href = await first.getAttribute('href')
    const at = new URL(href, server.url).searchParams.get('at')
    await first.click()
    expect(page.url()).toContain('/task/')
    expect(page.url()).toMatch(/#hit$/)
    const hit = page.locator('#hit')
    expect(await hit.isVisible()).toBe(true)
    expect(Date.parse(await hit.getAttribute('data-ts'))).toBeGreaterThanOrEqual(Date.parse(at))
    expect(await page.locator('article.msg.hit').count()).toBe(1)
    await shot('search-hit')
  })

  it('charts the usage on a calendar, stacked, and follows a day to its tasks', async () => {
    await page.goto(`${server.url}usage?tz=UTC`)
    const chart = page.locator('#usage-chart')
    expect(await chart.isVisible()).toBe(true)
    expect((await chart.boundingBox()).width).toBeGreaterThan(150)
    // Each day stacked by model, each segment saying its value; the legend names the models.
    const segments = await page.locator('#usage-chart g.seg title').allTextContents()
    expect(segments.length).toBeGreaterThan(1)
    for (const t of segments) expect(t).toMatch(/^2026-03-1\d · .+: \$\d+\.\d+, \d+ requests$/)
    const legend = await page.locator('#usage-legend li').allTextContents()
    expect(legend.length).toBeGreaterThan(0)
    for (const t of segments) expect(legend.some((l) => t.includes(` · ${l}:`))).toBe(true)
    expect(await page.locator('#usage-tokens-chart').isVisible()).toBe(true)
    // By mode, the same days.
    await page.selectOption('select[name=stack]', 'mode')
    await page.click('form.filters button[type=submit]')
    expect(new URL(page.url()).searchParams.get('stack')).toBe('mode')
    expect(await page.locator('#usage-legend li').allTextContents()).toContain('orchestrator')
    // A day leads to the tasks of that day, a task to its page.
    await page.locator('#usage-table tbody a', { hasText: '2026-03-10' }).click()
    expect(new URL(page.url()).searchParams.get('group')).toBe('tasks')
    expect(await page.locator('#usage-table tbody tr').count()).toBe(4)
    await page.locator('#usage-table tbody tr a').first().click()
    expect(page.url()).toMatch(/\/task\/019cd6/)
  })

  it('keeps a slot for every calendar day, empty ones empty', async () => {
    // A store whose two days of usage are ten weeks apart.
    const other = await startServer({ tasksDirs: [fixtureStore('stack-era-v3.20')], cacheDir: path.join(env.root, 'cache-stack') })
    try {
      await page.goto(`${other.url}usage?tz=UTC`)
      const periods = await page.locator('#usage-chart g.period').evaluateAll((gs) => gs.map((g) => [g.dataset.key, g.classList.contains('empty')]))
      const days = (Date.parse('2025-06-19') - Date.parse('2025-04-08')) / 86_400_000 + 1
      expect(periods).toHaveLength(days)
      expect(periods[0]).toEqual(['2025-04-08', false])
      expect(periods[days - 1]).toEqual(['2025-06-19', false])
      expect(periods.filter(([, empty]) => empty)).toHaveLength(days - 2)
      expect(periods.map(([k]) => k)).toContain('2025-05-01')
      expect(await page.locator('#usage-chart g.period.empty rect:not(.slot)').count()).toBe(0)
      // The axis names the first day of each month.
      const axis = await page.locator('#usage-chart text.axis').allTextContents()
      for (const d of ['2025-05-01', '2025-06-01']) expect(axis).toContain(d)
      await page.locator('#usage-chart g.seg').first().hover()
      await shot('usage-daily')
      await page.goto(`${other.url}usage?tz=UTC&group=weekly&stack=mode`)
      expect(await page.locator('#usage-chart g.period').count()).toBe(11)
      await shot('usage-weekly-modes')
    } finally {
      await other.close()
    }
  })

  it('charts a conversation by subtask and mode, with no script', async () => {
    await page.goto(`${server.url}usage?group=conversations`)
    expect(await page.locator('#usage-chart g.seg').count()).toBeGreaterThan(1)
    await page.locator('#usage-table tbody a', { hasText: 'Ajoute un cache des prévisions' }).first().click()
    expect(new URL(page.url()).searchParams.get('conversation')).toBe(ROOT)
    const tasks = await page.locator('#conversation-chart g.seg title').allTextContents()
    expect(tasks).toHaveLength(4)
    expect(tasks[0]).toMatch(new RegExp(`^${ROOT} \\(orchestrator\\): \\$0\\.1426, 29% of the conversation`))
    const modes = await page.locator('#conversation-modes g.seg title').allTextContents()
    expect(modes.map((m) => m.split(':')[0]).sort()).toEqual(['code', 'debug', 'orchestrator'])
    expect(await page.locator('#conversation').isVisible()).toBe(true)
    const found = await page.evaluate(() => ({
      scripts: document.querySelectorAll('script').length,
      handlers: [...document.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length,
      styles: document.querySelectorAll('[style], style').length,
    }))
    expect(found).toEqual({ scripts: 0, handlers: 0, styles: 0 })
    await shot('usage-conversation')
    await page.goto(`${server.url}usage?group=models`)
    expect(await page.locator('#usage-chart rect.bar').count()).toBeGreaterThan(0)
    await shot('usage-models')
  })

  it('renders hostile texts as text and runs none of them', async () => {
    await page.goto(`${server.url}task/${HOSTILE_ID}`)
    expect(await page.textContent('h1')).toBe(HOSTILE_TITLE)
    expect(await page.locator('.msg .text').last().textContent()).toBe(HOSTILE_REPLY)
    await shot('hostile-task')
    await page.goto(server.url)
    expect(await page.locator('a.title', { hasText: 'Evil & "quoted"' }).textContent()).toBe(HOSTILE_TITLE)
    for (const url of [server.url, `${server.url}task/${HOSTILE_ID}`]) {
      await page.goto(url)
      const found = await page.evaluate(() => ({
        pwned: window.__pwned ?? null,
        scripts: document.querySelectorAll('script').length,
        media: document.querySelectorAll('main img, main svg, main iframe').length,
        handlers: [...document.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length,
        jsLinks: [...document.querySelectorAll('a')].filter((a) => a.href.startsWith('javascript:')).length,
      }))
      expect(found, url).toEqual({ pwned: null, scripts: 0, media: 0, handlers: 0, jsLinks: 0 })
    }
    expect(dialogs).toEqual([])
  })

  it('answers 403 to the browser without the token', async () => {
    const res = await page.goto(new URL('/', server.url).href)
    expect(res.status()).toBe(403)
  })
})
