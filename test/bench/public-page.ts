// The public page with its track record: how long Chromium takes to load / of a `serve --demo`
// server until the three track record charts are in the DOM (a new page each load, median of
// --loads), against a baseline in the same run: the very same HTML saved to a file and loaded from
// a file:// URL (no server work, no network). Loads alternate between the two. Then, with the
// server stopped, the server-side render of the section itself from the same data dir, uncached
// (its cache would otherwise answer every render after the first until the database changes).
// Run: PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/public-page.ts [--loads 15]
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { chromium, type Browser } from 'playwright-core'
import { startServer, tempDir } from '../support/harness.ts'

const flag = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}
const LOADS = Number(flag('loads', '15'))
const CHARTS = 3

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const ms = (x: number) => `${x.toFixed(1)} ms`

/** One load in a new page: from the navigation's start until the charts are in the DOM. */
async function load(browser: Browser, url: string): Promise<number> {
  const page = await browser.newPage()
  try {
    const started = performance.now()
    await page.goto(url, { waitUntil: 'commit' })
    await page.waitForFunction((n) => document.querySelectorAll('svg.chart polyline.equity').length === n, CHARTS, { polling: 'raf' })
    return performance.now() - started
  } finally {
    await page.close()
  }
}

const server = await startServer({ args: ['--demo', '--quiet'] })
const replayLine = /Demo: +replayed[^\n]*/.exec(server.output())?.[0]
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
})
const served: number[] = []
const file: number[] = []
let bytes = 0
try {
  const html = await (await fetch(`${server.url}/`)).text()
  bytes = Buffer.byteLength(html)
  const saved = join(tempDir('public-page'), 'index.html')
  writeFileSync(saved, html)
  const fileUrl = pathToFileURL(saved).href
  await load(browser, `${server.url}/`) // warm-up, unmeasured: the first render fills the cache
  await load(browser, fileUrl)
  for (let i = 0; i < LOADS; i++) {
    served.push(await load(browser, `${server.url}/`))
    file.push(await load(browser, fileUrl))
  }
} finally {
  await browser.close()
  await server.stop()
}

// The section's own render, in this process on the stopped server's data dir.
const { openApp } = await import('../../src/app.ts')
const { commandConfig } = await import('../../src/config.ts')
const { trackRecordHtml } = await import('../../src/signals/track-record.ts')
const app = await openApp(commandConfig(server.dataDir))
const renders: number[] = []
for (let i = 0; i <= LOADS; i++) {
  const started = performance.now()
  // The cache is keyed by the flag too: alternating it makes every call a full render.
  await trackRecordHtml(app.store.read, app.store, i % 2 === 0)
  if (i > 0) renders.push(performance.now() - started)
}

console.log(replayLine ?? '(no replay line)')
console.log(`page: ${(bytes / 1024).toFixed(1)} KiB, ${CHARTS} charts; ${LOADS} loads each, a new page per load, median (min .. max)`)
console.log(`  served by serve --demo   ${ms(median(served))} (${ms(Math.min(...served))} .. ${ms(Math.max(...served))})`)
console.log(`  same HTML from file://   ${ms(median(file))} (${ms(Math.min(...file))} .. ${ms(Math.max(...file))})`)
console.log(
  `  track record render, uncached (3 x forwardPerformance + HTML)   ${ms(median(renders))} (${ms(Math.min(...renders))} .. ${ms(Math.max(...renders))})`,
)
process.exit(0)
