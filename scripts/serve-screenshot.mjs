// The README's picture of `roo-state serve`: the bundled fixture stores served, the conversations
// of the store whose links are inferred (stack-era-v3.20) expanded, written to docs/serve.png (node scripts/serve-screenshot.mjs).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startServer } from '../cli/serve/server.mjs'
import { launchChromium } from './chromium.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const stores = ['history-item-v3.50', 'stack-era-v3.20', 'native-tools-v3.45'].map((s) => path.join(root, 'fixtures', 'stores', s, 'tasks'))
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'roo-serve-shot-'))
const server = await startServer({ tasksDirs: stores, cacheDir })
const browser = await launchChromium({ width: 1180, height: 560 })
try {
  const page = await browser.context.newPage()
  await page.goto(`${server.url}?store=1`)
  for (const kids of await page.locator('summary .kids').all()) {
    if (await kids.isVisible()) await kids.click()
  }
  const out = path.join(root, 'docs', 'serve.png')
  await page.screenshot({ path: out })
  console.log(`${out} (${server.url.replace(server.token, '<token>')})`)
} finally {
  await browser.close()
  await server.close()
  fs.rmSync(cacheDir, { recursive: true, force: true })
}
