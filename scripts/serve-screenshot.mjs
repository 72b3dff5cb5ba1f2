// The README's pictures of `roo-state serve` (node scripts/serve-screenshot.mjs [tree|usage], both
// by default):
// - docs/serve.png: the bundled fixture stores served, the conversations of the store whose links
//   are inferred (stack-era-v3.20) expanded;
// - docs/usage-calendar.png and docs/usage-conversation.png: the usage page of a generated store
//   (roo-corpus, 400 tasks, its default seed): six months of days on a calendar, cost stacked by
//   model; one orchestrator conversation's cost by mode and by subtask.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startServer } from '../cli/serve/server.mjs'
import { launchChromium } from './chromium.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
// A fixed folder, so that the pictures name the same store path each time.
const work = path.join(os.tmpdir(), 'roo-serve-shot')
fs.rmSync(work, { recursive: true, force: true })
fs.mkdirSync(work)

async function shoot(tasksDirs, width, height, pages) {
  const server = await startServer({ tasksDirs, cacheDir: path.join(work, 'cache') })
  const browser = await launchChromium({ width, height })
  try {
    const page = await browser.context.newPage()
    for (const take of pages) {
      const out = await take(page, server.url)
      console.log(`${out} (${server.url.replace(server.token, '<token>')})`)
    }
  } finally {
    await browser.close()
    await server.close()
  }
}

const only = process.argv[2]
try {
  if (only !== 'usage') await tree()
  if (only !== 'tree') await usage()
} finally {
  fs.rmSync(work, { recursive: true, force: true })
}

async function tree() {
  const stores = ['history-item-v3.50', 'stack-era-v3.20', 'native-tools-v3.45'].map((s) => path.join(root, 'fixtures', 'stores', s, 'tasks'))
  await shoot(stores, 1180, 560, [
    async (page, url) => {
      await page.goto(`${url}?store=1`)
      for (const kids of await page.locator('summary .kids').all()) {
        if (await kids.isVisible()) await kids.click()
      }
      const out = path.join(root, 'docs', 'serve.png')
      await page.screenshot({ path: out })
      return out
    },
  ])
}

async function usage() {
  const corpus = path.join(work, 'corpus')
  execFileSync('cargo', ['run', '-q', '--release', '-p', 'roo-corpus', '--', '--out', corpus, '--tasks', '400', '--force'], { cwd: root, stdio: 'inherit' })
  await shoot([path.join(corpus, 'tasks')], 1180, 900, [
    async (page, url) => {
      await page.goto(`${url}usage?tz=UTC&since=2025-02-01&until=2025-07-31`)
      const out = path.join(root, 'docs', 'usage-calendar.png')
      await page.screenshot({ path: out, clip: { x: 0, y: 0, width: 1180, height: 560 } })
      return out
    },
    async (page, url) => {
      await page.goto(`${url}usage?tz=UTC&group=conversations&since=2025-02-01`)
      await page.locator('#usage-table tbody tr a').first().click()
      const out = path.join(root, 'docs', 'usage-conversation.png')
      await page.locator('#conversation').screenshot({ path: out })
      return out
    },
  ])
}
