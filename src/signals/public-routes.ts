// The public live feed: GET /api/v1/public/signals (JSON) and the page at / (HTML). No credential.
// The page is rendered with the current rows and each model's track record (./track-record.ts)
// already in it, so it reads without JavaScript (and reloads itself every minute through <noscript>
// meta refresh); its small script re-fetches the feed's JSON on an interval.
// `serve --no-public-feed` turns both off (404).
import { nodeCrypto } from '../shared/crypto.ts'
import { defineRoute, Raw, type RouteSpec } from '../http/route.ts'
import { DomainError } from '../shared/errors.ts'
import { assetText } from '../store/assets.ts'
import type { Queries, Store } from '../store/store.ts'
import { currentFeed, feedRowSchema, syntheticPrices, type FeedRow } from './feed.ts'
import { escapeHtml, trackRecordHtml } from './track-record.ts'

const PAGE = 'src/signals/public/index.html'

const getPublicSignals = defineRoute({
  method: 'GET',
  path: '/api/v1/public/signals',
  summary: 'Public live feed: the current signal of every pair of every model (no credential)',
  tag: 'public',
  access: 'public',
  errors: ['not_found'], // serve --no-public-feed
  response: { type: 'array', items: feedRowSchema },
  handler: (ctx) => {
    ctx.headers['Cache-Control'] = 'no-cache'
    ctx.headers['Access-Control-Allow-Origin'] = '*'
    return currentFeed(ctx.db)
  },
})

function rowHtml(r: FeedRow): string {
  return (
    `<tr><td class="pair">${escapeHtml(r.pair)}</td><td><span class="dir dir-${escapeHtml(r.direction)}">${escapeHtml(r.direction)}</span></td>` +
    `<td>${escapeHtml(r.model)}<span class="version">v${escapeHtml(r.model_version)}</span></td><td class="num">${escapeHtml(r.schedule_utc)}</td>` +
    `<td><span class="mode">${escapeHtml(r.mode)}</span></td><td class="date">${escapeHtml(r.as_of)}</td></tr>`
  )
}

interface Template {
  text: string
  csp: string
}
let template: Template | undefined

/** The page's inline script and style are allowed by hash, so nothing else can run on it. */
function loadTemplate(): Template {
  const text = assetText(PAGE)
  const hashes = (tag: string) =>
    [...text.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))]
      .map((m) => `'sha256-${nodeCrypto().createHash('sha256').update(m[1]).digest('base64')}'`)
      .join(' ')
  const csp = `default-src 'none'; connect-src 'self'; script-src ${hashes('script')}; style-src ${hashes('style')}; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`
  return { text, csp }
}

async function renderPage(db: Queries, store: Store, now: Date): Promise<string> {
  template ??= loadTemplate()
  const rows = await currentFeed(db)
  const models = new Set(rows.map((r) => r.model)).size
  const synthetic = await syntheticPrices(db)
  const banner =
    synthetic.pairs > 0
      ? `<div class="banner" id="synthetic">Demo data: the prices behind these signals are synthetic (a seeded random walk, seed ${synthetic.seed}, for ${synthetic.pairs} pairs), not market data.</div>`
      : ''
  const body = rows.length ? rows.map(rowHtml).join('') : '<tr class="empty"><td colspan="6">No signals published yet.</td></tr>'
  const values: Record<string, string> = {
    ROWS: body,
    BANNER: banner,
    COUNT: `${rows.length} signals · ${models} ${models === 1 ? 'model' : 'models'}`,
    UPDATED: `${now.toISOString().slice(0, 19).replace('T', ' ')} UTC`,
    TRACK: await trackRecordHtml(db, store, synthetic.pairs > 0),
  }
  return template.text.replace(/\{\{(ROWS|BANNER|COUNT|UPDATED|TRACK)\}\}/g, (_, name: string) => values[name])
}

const getFeedPage = defineRoute({
  method: 'GET',
  path: '/',
  summary: 'The public live feed as a page that refreshes itself (?refresh=SECONDS, default 30)',
  tag: 'public',
  access: 'public',
  errors: ['not_found'], // serve --no-public-feed
  query: { refresh: { type: 'integer', minimum: 1, maximum: 3600, description: 'seconds between refreshes of the table (read by the page)' } },
  response: null,
  contentType: 'text/html',
  handler: async (ctx) => {
    template ??= loadTemplate()
    return new Raw(200, 'text/html; charset=utf-8', await renderPage(ctx.db, ctx.store, ctx.now), {
      'Content-Security-Policy': template.csp,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-cache',
    })
  },
})

/** This feature's routes, in the order the router tries them; with the feed off (--no-public-feed) both answer 404. */
export function publicFeedRoutes(enabled: boolean): RouteSpec[] {
  const routes = [getPublicSignals, getFeedPage]
  if (enabled) return routes
  return routes.map((spec) => ({
    ...spec,
    handler: () => {
      throw new DomainError('not_found', 'the public feed is turned off on this server')
    },
  }))
}
