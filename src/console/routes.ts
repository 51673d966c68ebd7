// The tenant's web console (SPEC 12): GET /console, the page's shell, and GET /console/assets/:name,
// its ES modules, its stylesheet and the uPlot files vendored from npm. Both are public: the shell
// holds no data, every figure is fetched from the API with the signed-in user's token. Nothing on
// the page is inline, so the policy allows scripts and styles from this origin only.
import { nodeCrypto } from '../shared/crypto.ts'
import { defineRoute, Raw, type RouteSpec } from '../http/route.ts'
import { DomainError } from '../shared/errors.ts'
import { assetList, assetText } from '../store/assets.ts'

const DIR = 'src/console/public'
const SHELL = `${DIR}/index.html`
/** uPlot's files as npm ships them; build.mjs embeds these two paths into the executable. */
export const UPLOT_FILES = ['node_modules/uplot/dist/uPlot.iife.min.js', 'node_modules/uplot/dist/uPlot.min.css']

export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' }

interface Asset {
  body: Buffer
  type: string
  etag: string
}

let assets: Map<string, Asset> | undefined

/** Every file the page may load, by the name in its URL; read once (from the repository or the executable). */
function loadAssets(): Map<string, Asset> {
  // Flat: a nested file would need a name with a slash, which :name cannot match. The shell (.html) has a route of its own.
  const own = assetList(DIR).filter((name) => !name.includes('/'))
  const found = new Map<string, Asset>()
  for (const path of [...own.map((name) => `${DIR}/${name}`), ...UPLOT_FILES]) {
    const name = path.slice(path.lastIndexOf('/') + 1)
    const type = TYPES[name.slice(name.lastIndexOf('.') + 1)]
    if (!type) continue
    const body = Buffer.from(assetText(path))
    found.set(name, { body, type, etag: `"${nodeCrypto().createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` })
  }
  return found
}

/** The same headers on the shell and on every asset: no sniffing, no referrer, revalidated on every load (the names carry no version). */
const COMMON = { 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer', 'Cache-Control': 'no-cache' }

const getConsole = defineRoute({
  method: 'GET',
  path: '/console',
  summary: "The tenant's web console (a page; its data comes from this API with the user's session)",
  tag: 'console',
  access: 'public',
  hidden: true,
  response: null,
  contentType: 'text/html',
  handler: () => new Raw(200, 'text/html; charset=utf-8', assetText(SHELL), { ...COMMON, 'Content-Security-Policy': CONSOLE_CSP }),
})

const getConsoleAsset = defineRoute({
  method: 'GET',
  path: '/console/assets/:name',
  summary: "One of the console's scripts or stylesheets",
  tag: 'console',
  access: 'public',
  hidden: true,
  errors: ['not_found'],
  response: null,
  contentType: 'text/javascript',
  handler: (ctx) => {
    assets ??= loadAssets()
    const asset = assets.get(ctx.params.name)
    if (!asset) throw new DomainError('not_found', `the console has no asset named ${JSON.stringify(ctx.params.name.slice(0, 80))}`)
    const headers = { ...COMMON, ETag: asset.etag }
    if (ctx.req.headers['if-none-match'] === asset.etag) return new Raw(304, asset.type, '', headers)
    return new Raw(200, asset.type, asset.body, headers)
  },
})

/** This feature's routes, in the order the router tries them. */
export const consoleRoutes: RouteSpec[] = [getConsole, getConsoleAsset]
