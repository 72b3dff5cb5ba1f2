// Headless Chromium (Debian's `chromium` package) driven by playwright-core, for the browser tests
// of `roo-state serve` and the README's screenshot. The flags keep Chromium from reaching for the
// network on its own (a closed network otherwise makes it misbehave); each run has a fresh profile.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

export const CHROMIUM = process.env.ROO_STATE_CHROMIUM || '/usr/bin/chromium'

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** A browser context on a fresh profile; `close()` also removes the profile. */
export async function launchChromium({ width = 1280, height = 900 } = {}) {
  const { chromium } = await import('playwright-core')
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'roo-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width, height },
  })
  return {
    context,
    async close() {
      await context.close()
      fs.rmSync(profile, { recursive: true, force: true })
    },
  }
}
