// The console's figures (SPEC 12, docs/console.md): the gzipped size of its own JS and CSS
// (everything under src/console/public/ but the shell), and of uPlot beside it; then how long
// Chromium takes from the navigation to GET /console until the sign-in form is usable (the e-mail
// field focused, the modules run), a new page each load, median of --loads, against a baseline in
// the same run: the public page / of the same `serve --demo` server until its table is in the DOM.
// Loads alternate between the two.
// Run: PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/console.ts [--loads 5]
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { chromium, type Browser, type Page } from 'playwright-core'
import { ROOT, startServer } from '../support/harness.ts'

const flag = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}
const LOADS = Number(flag('loads', '5'))
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`
const gz = (files: string[]) => files.reduce((sum, file) => sum + gzipSync(readFileSync(file), { level: 9 }).length, 0)
const raw = (files: string[]) => files.reduce((sum, file) => sum + readFileSync(file).length, 0)

const dir = join(ROOT, 'src/console/public')
const own = readdirSync(dir)
  .filter((name) => /\.(js|css)$/.test(name))
  .map((name) => join(dir, name))
const uplot = ['uPlot.iife.min.js', 'uPlot.min.css'].map((name) => join(ROOT, 'node_modules/uplot/dist', name))

/** One load in a new page: from the navigation's start until `ready` holds. */
async function load(browser: Browser, url: string, ready: (page: Page) => Promise<unknown>): Promise<number> {
  const page = await browser.newPage()
  try {
    const started = performance.now()
    await page.goto(url, { waitUntil: 'commit' })
    await ready(page)
    return performance.now() - started
  } finally {
    await page.close()
  }
}

const signInReady = (page: Page) =>
  page.waitForFunction(() => document.querySelector('main[data-ready="sign-in"]') && document.activeElement?.id === 'email', undefined, { polling: 'raf' })
const feedReady = (page: Page) => page.waitForFunction(() => document.querySelectorAll('tbody tr').length > 0, undefined, { polling: 'raf' })

const server = await startServer({ args: ['--demo', '--quiet'] })
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
})
const consoleLoads: number[] = []
const feedLoads: number[] = []
try {
  await load(browser, `${server.url}/console`, signInReady) // warm-up, unmeasured
  await load(browser, `${server.url}/`, feedReady)
  for (let i = 0; i < LOADS; i++) {
    consoleLoads.push(await load(browser, `${server.url}/console`, signInReady))
    feedLoads.push(await load(browser, `${server.url}/`, feedReady))
  }
} finally {
  await browser.close()
  await server.stop()
}

const ms = (xs: number[]) => `${median(xs).toFixed(1)} ms (${Math.min(...xs).toFixed(1)} .. ${Math.max(...xs).toFixed(1)})`
console.log(`console's own JS+CSS: ${own.length} files, ${kib(raw(own))}, gzipped ${kib(gz(own))} (budget 150 KB)`)
console.log(`uPlot (vendored):     ${uplot.length} files, ${kib(raw(uplot))}, gzipped ${kib(gz(uplot))}`)
console.log(`both, gzipped:        ${kib(gz(own) + gz(uplot))}`)
console.log(`${LOADS} loads each, a new page per load, median (min .. max):`)
console.log(`  GET /console to a usable sign-in form: ${ms(consoleLoads)} (budget < 1 s)`)
console.log(`  GET / (public page) to its table:      ${ms(feedLoads)}`)
