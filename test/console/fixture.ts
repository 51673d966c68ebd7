// What the console's tests share: a real `serve --demo` (a tenant with a year of synthetic candles
// replayed through the real publisher and paper broker: signals, orders, fills, open and closed
// trades, an equity history), a viewer added through the real CLI, Debian's Chromium, and a page
// that records every script error, CSP violation and request that would leave 127.0.0.1.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import * as assert from 'uvu/assert'
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core'
import { cli, login, startServer, type Server } from '../support/harness.ts'
import { eventually } from '../signals/fixtures.ts'

export const VIEWER = { email: 'viewer@demo.localhost', password: 'viewer-password-console-1' }
export const VIEWS = ['overview', 'signals', 'orders', 'risk', 'incidents', 'models', 'api-keys', 'webhooks', 'venue', 'alerts']

export interface ConsoleFixture {
  server: Server
  browser: Browser
  owner: { email: string; password: string; jwt: string }
  viewerJwt: string
  stop(): Promise<void>
}

export async function consoleFixture(): Promise<ConsoleFixture> {
  const server = await startServer({ args: ['--demo', '--quiet'] })
  await eventually(() => (/Demo: +published/.test(server.output()) ? true : undefined), 'the demo lines of the banner')
  const password = /password \(shown once\): (\S+)/.exec(server.output())![1]
  const made = await cli(['user', 'create', VIEWER.email, '--tenant', 'demo', '--role', 'viewer', '--password-stdin'], {
    dataDir: server.dataDir,
    input: VIEWER.password,
  })
  assert.is(made.code, 0, made.stderr)
  // A browser that cannot start (no Chromium installed) must fail the file, not leave the server running.
  const browser = await launchChromium().catch(async (error) => {
    await server.stop()
    throw error
  })
  const owner = { email: 'owner@demo.localhost', password, jwt: await login(server, 'owner@demo.localhost', password) }
  return {
    server,
    browser,
    owner,
    viewerJwt: await login(server, VIEWER.email, VIEWER.password),
    async stop() {
      await browser.close()
      await server.stop()
    },
  }
}

/** Debian's Chromium, headless, with nothing of its own reaching the network. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}

export interface WatchedPage {
  page: Page
  /** Script errors, console errors other than the API's expected refusals, CSP violations, and requests off 127.0.0.1. */
  problems: string[]
  close(): Promise<void>
}

/** A page in its own context (its own sessionStorage), watched from its first request. */
export async function watchedPage(browser: Browser, options: BrowserContextOptions = {}): Promise<WatchedPage> {
  const context = await browser.newContext(options)
  const page = await context.newPage()
  const problems: string[] = []
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  page.on('console', (m) => {
    // Chromium logs every non-2xx fetch; the tests provoke some (a wrong password, a refused resume).
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) problems.push(`console: ${m.text()}`)
  })
  page.on('request', (r) => {
    const url = new URL(r.url())
    if (url.protocol !== 'data:' && url.hostname !== '127.0.0.1') problems.push(`request off the server: ${r.url()}`)
  })
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`))
  })
  return { page, problems, close: () => context.close() }
}

/** Opens the console and signs in through its form; resolves once the first view has drawn. */
export async function signIn(page: Page, server: Server, email: string, password: string): Promise<void> {
  await page.goto(`${server.url}/console`)
  await page.waitForSelector('main[data-ready="sign-in"]')
  await page.getByLabel('E-mail').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForSelector('main[data-ready="overview"]')
}

/** Navigates with the console's own links and waits for the view's data. */
export async function openView(page: Page, id: string): Promise<void> {
  await page.locator(`nav a[data-view="${id}"]`).click()
  await page.waitForSelector(`main[data-ready="${id}"]`)
}

/** The text of every cell of a table, row by row (the "nothing yet" row is no row). */
export async function cells(page: Page, selector: string): Promise<string[][]> {
  const rows = await page.locator(`${selector} tbody tr:not(.empty)`).all()
  return Promise.all(rows.map((row) => row.locator('td').allTextContents()))
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** axe-core's serious and critical violations on the page as it is now, one line each. */
export async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through DevTools, which the page's CSP does not govern; nothing is added to the page's markup.
  await page.evaluate(axeSource)
  const result = await page.evaluate(() => (window as any).axe.run(document, { resultTypes: ['violations'] }))
  return result.violations
    .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
    .map((v: any) => `${v.id} (${v.impact}): ${v.nodes.map((n: any) => n.target.join(' ')).join(', ')}`)
}

/** The oracle's own words for a closed trade's exit_reason. */
const EXIT_REASONS: Record<string, string> = {
  manual: 'Manual order',
  signal: 'Signal',
  flatten: 'Flatten',
  venue_stop: 'Stop on the venue',
  venue_take_profit: 'Take-profit on the venue',
}

/** The oracle's own formatting of the figures the console shows. */
export const fmt = {
  money: (x: number | null) => (x === null ? '\u2014' : new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(x)),
  signed: (x: number) => (x > 0 ? `+${fmt.money(x)}` : fmt.money(x)),
  pct: (x: number | null, sign = false) => (x === null ? '\u2014' : `${sign && x > 0 ? '+' : ''}${x.toFixed(2)}%`),
  amount: (x: number | null) => (x === null ? '\u2014' : new Intl.NumberFormat('en-US', { maximumFractionDigits: 8 }).format(x)),
  when: (iso: string | null) => (iso === null ? '\u2014' : `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`),
  hash: (hash: string) => `${hash.slice(0, 12)}\u2026`,
  /** A trade's protection on the venue (SPEC 13): the status, what rests, and for FAILED where to read why. */
  protection: (p: any): string => {
    if (p === null) return '\u2014'
    const rests = [
      p.stop_price === null ? '' : `stop ${fmt.amount(p.stop_price)}`,
      p.take_profit_price === null ? '' : `take-profit ${fmt.amount(p.take_profit_price)}`,
      p.venue_order_ids.length ? `venue orders ${p.venue_order_ids.join(', ')}` : '',
    ].filter(Boolean)
    const parts = [p.status === 'FAILED' ? 'FAILED: not protected' : p.status]
    if (rests.length) parts.push(rests.join('; '))
    if (p.status === 'FAILED') parts.push('The venue refused it: see the incidents.')
    return parts.join(' ')
  },
  exitReason: (reason: string | null) => (reason === null ? '\u2014' : EXIT_REASONS[reason]),
}
