// Every setting of a running Bulwark, read in one place from the command line and the environment,
// checked, and frozen. The Config is passed down from src/app.ts; no module keeps a setting of its
// own, so what a process does is what its Config says.
import { readFileSync } from 'node:fs'
import { cidrList } from './shared/cidr.ts'
import { parseOrigin } from './shared/origin.ts'

/** A setting that cannot be used; the CLI answers it like a bad flag (exit 2, the usage). */
export class ConfigError extends Error {}

/** Flags as the CLI's parser gives them: a name without its dashes -> value. */
export type Flags = Readonly<Record<string, string | boolean | string[] | undefined>>

export interface Config {
  /** Where bulwark.db and the key files live (--data-dir, env BULWARK_DATA_DIR, ./bulwark-data). */
  readonly dataDir: string
  /** Where the keys every node must share live (--secrets-dir, env BULWARK_SECRETS_DIR, the data dir). */
  readonly secretsDir: string
  /**
   * A PostgreSQL database instead of the data dir's SQLite file (--database, env
   * BULWARK_DATABASE_URL): postgres://user:password@host:port/db. It carries a password: never logged.
   */
  readonly databaseUrl: string | undefined
  readonly host: string
  readonly port: number
  /** serve --demo: synthetic prices, a demo tenant, a publish at once. */
  readonly demo: boolean
  /** GET /api/v1/public/signals and the page at / (off with --no-public-feed). */
  readonly publicFeed: boolean
  /** Prometheus text at /metrics (--metrics). */
  readonly metrics: boolean
  /** No request log lines (--quiet). */
  readonly quiet: boolean
  readonly ratePerMinute: number
  /** Login attempts a minute per (address, e-mail); ten times as many per address. */
  readonly loginPerMinute: number
  /** Proxies whose X-Forwarded-For is believed (--trusted-proxy, repeatable). */
  readonly trustedProxies: readonly string[]
  /** Days finished webhook deliveries and their events are kept (--retention-days). */
  readonly retentionDays: number
  readonly webhooks: {
    /** Private ranges an operator allows as webhook targets (--webhook-allow-cidr, repeatable). */
    readonly allowCidrs: readonly string[]
    /** Extra trusted CAs for LAN receivers (--webhook-ca-file). */
    readonly caFile: string | undefined
    /** Multiplies the retry delays: test-only (env BULWARK_WEBHOOK_RETRY_SCALE, in (0, 1]). */
    readonly retryScale: number
  }
  /** An external OpenID Connect issuer whose access tokens are accepted too (--oidc-issuer, --oidc-audience). */
  readonly oidc: { readonly issuer: string; readonly audience: string } | undefined
  /** Where exchanges are reached: another server for their API (--venue-url) and extra CAs (--ca-file). */
  readonly venues: VenueSettings
  /** serve --market-data EXCHANGE: daily candles of every catalogue pair from that ccxt exchange. */
  readonly marketData: string | undefined
  /** Where senders outside reach this server, no trailing slash (--public-url, env BULWARK_PUBLIC_URL): alert hooks' URLs. */
  readonly publicUrl: string | undefined
}

export interface VenueSettings {
  /** scheme://host:port that replaces every exchange API's own; the paths are kept. */
  readonly url: string | undefined
  readonly caFile: string | undefined
}

export const SERVE_FLAGS = {
  host: 'string',
  port: 'string',
  'data-dir': 'string',
  'secrets-dir': 'string',
  database: 'string',
  demo: 'boolean',
  'no-public-feed': 'boolean',
  'rate-limit': 'string',
  'login-rate-limit': 'string',
  quiet: 'boolean',
  metrics: 'boolean',
  'webhook-allow-cidr': 'list',
  'webhook-ca-file': 'string',
  'oidc-issuer': 'string',
  'oidc-audience': 'string',
  'trusted-proxy': 'list',
  'retention-days': 'string',
  'market-data': 'string',
  'venue-url': 'string',
  'ca-file': 'string',
  'public-url': 'string',
} as const

/** The flags every command takes: where the database and the shared secrets are. */
export const STORE_FLAGS = { 'data-dir': 'string', 'secrets-dir': 'string', database: 'string' } as const

/** The flags every command that reaches an exchange takes. */
export const VENUE_FLAGS = { 'venue-url': 'string', 'ca-file': 'string' } as const

type Env = Record<string, string | undefined>

/** --database: a postgres:// or postgresql:// URL (SPEC 15); empty is none. */
function databaseUrl(text: string | undefined): string | undefined {
  return text === undefined || text === '' ? undefined : postgresUrl(text, '--database')
}

/**
 * A PostgreSQL URL given to `flag`, checked: a ConfigError (exit 2) names what is wrong and never
 * repeats the URL (it carries a password).
 *
 * @example
 * postgresUrl('postgres://bulwark:pw@db.lan/bulwark', '--to') // returned as given
 */
export function postgresUrl(text: string, flag: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new ConfigError(`${flag} must be a URL: postgres://user:password@host:5432/database`)
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw new ConfigError(`${flag} takes a postgres:// or postgresql:// URL, not ${url.protocol}//`)
  if (url.hostname === '') throw new ConfigError(`${flag} must name a host: postgres://user:password@host:5432/database`)
  return text
}

export function dataDirFrom(flag: string | undefined, env: Env = process.env): string {
  return flag ?? env.BULWARK_DATA_DIR ?? './bulwark-data'
}

/**
 * The Config of a CLI command other than serve: its data dir, and every serve setting at its
 * default (a command serves nothing and delivers nothing).
 *
 * @example
 * const config = commandConfig(args.flags) // reads --data-dir and --secrets-dir (STORE_FLAGS)
 * commandConfig('/var/lib/bulwark') // a data dir alone: its secrets beside it
 */
export function commandConfig(flags: Flags | string | undefined, env: Env = process.env): Config {
  const given = typeof flags === 'object' ? flags : { 'data-dir': flags }
  return serveConfig({ 'data-dir': given['data-dir'], 'secrets-dir': given['secrets-dir'], database: given.database }, env)
}

/** The Config of `serve` from its parsed flags (SERVE_FLAGS); a bad value is a ConfigError. */
export function serveConfig(flags: Flags, env: Env = process.env): Config {
  const str = (name: string) => flags[name] as string | undefined
  const portText = str('port') ?? '8080'
  const port = Number(portText)
  if (!/^\d+$/.test(portText) || port > 65535) throw new ConfigError('--port must be an integer 0-65535')
  const retentionText = str('retention-days') ?? '30'
  if (!/^\d{1,4}$/.test(retentionText) || +retentionText < 1 || +retentionText > 3650) throw new ConfigError('--retention-days must be an integer 1-3650')
  const trustedProxies = (flags['trusted-proxy'] as string[] | undefined) ?? []
  const allowCidrs = (flags['webhook-allow-cidr'] as string[] | undefined) ?? []
  // Checked here, so a typo stops the start with exit 2 instead of failing later.
  for (const [flag, cidrs] of [
    ['--trusted-proxy', trustedProxies],
    ['--webhook-allow-cidr', allowCidrs],
  ] as const) {
    try {
      cidrList(cidrs, flag)
    } catch (error) {
      throw new ConfigError((error as Error).message)
    }
  }
  return deepFreeze({
    dataDir: dataDirFrom(str('data-dir'), env),
    secretsDir: str('secrets-dir') ?? env.BULWARK_SECRETS_DIR ?? dataDirFrom(str('data-dir'), env),
    databaseUrl: databaseUrl(str('database') ?? env.BULWARK_DATABASE_URL),
    host: str('host') ?? '127.0.0.1',
    port,
    demo: flags.demo === true,
    publicFeed: flags['no-public-feed'] !== true,
    metrics: flags.metrics === true,
    quiet: flags.quiet === true,
    ratePerMinute: positiveInteger(str('rate-limit'), '--rate-limit') ?? 1200,
    loginPerMinute: positiveInteger(str('login-rate-limit'), '--login-rate-limit') ?? 10,
    trustedProxies,
    retentionDays: Number(retentionText),
    webhooks: { allowCidrs, caFile: str('webhook-ca-file'), retryScale: retryScale(env) },
    oidc: oidc(str('oidc-issuer'), str('oidc-audience')),
    venues: venueSettings(flags),
    marketData: exchangeId(str('market-data'), '--market-data'),
    publicUrl: publicUrl(str('public-url') ?? env.BULWARK_PUBLIC_URL, str('public-url') === undefined ? 'BULWARK_PUBLIC_URL' : '--public-url'),
  })
}

/** An absolute http(s) URL, maybe with a reverse proxy's path prefix (kept, its trailing slash dropped); empty is none. */
function publicUrl(raw: string | undefined, flag: string): string | undefined {
  if (raw === undefined || raw === '') return undefined
  const url = URL.canParse(raw) ? new URL(raw) : undefined
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    throw new ConfigError(`${flag} must be an absolute http(s) URL such as https://alerts.example.com`)
  if (/[?#]/.test(raw) || url.username || url.password)
    throw new ConfigError(`${flag} takes a scheme, a host, a port and a path prefix only (no query, fragment or credentials)`)
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

/** --venue-url and --ca-file, checked: a URL with a path or a query would silently change the exchange's API. */
export function venueSettings(flags: Flags): VenueSettings {
  const raw = flags['venue-url'] as string | undefined
  let url: string | undefined
  if (raw !== undefined) {
    const parsed = parseOrigin(raw)
    if (!parsed.ok) throw new ConfigError(`--venue-url ${parsed.reason}`)
    url = parsed.origin
  }
  const caFile = flags['ca-file'] as string | undefined
  if (caFile !== undefined) {
    // Read now, so a typo stops the start (exit 2) instead of failing the first call to the venue.
    let text: string
    try {
      text = readFileSync(caFile, 'utf8')
    } catch (error) {
      throw new ConfigError(`--ca-file ${caFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
    }
    if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError(`--ca-file ${caFile} holds no PEM certificate`)
  }
  return { url, caFile }
}

/** A ccxt exchange id: lowercase letters and digits. */
export function exchangeId(raw: string | undefined, flag: string): string | undefined {
  if (raw === undefined) return undefined
  if (!/^[a-z][a-z0-9]{1,30}$/.test(raw)) throw new ConfigError(`${flag} must be a ccxt exchange id such as binance`)
  return raw
}

function positiveInteger(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined
  const n = Number(raw)
  if (!Number.isInteger(n) || n <= 0) throw new ConfigError(`${flag} must be a positive integer`)
  return n
}

function retryScale(env: Env): number {
  const raw = env.BULWARK_WEBHOOK_RETRY_SCALE
  if (raw === undefined || raw === '') return 1
  const scale = Number(raw)
  if (!Number.isFinite(scale) || scale <= 0 || scale > 1) throw new ConfigError('BULWARK_WEBHOOK_RETRY_SCALE must be a number in (0, 1]')
  return scale
}

function oidc(issuer: string | undefined, audience: string | undefined): Config['oidc'] {
  if (issuer === undefined && audience === undefined) return undefined
  if (!issuer || !audience) throw new ConfigError('--oidc-issuer and --oidc-audience go together')
  let url: URL
  try {
    url = new URL(issuer)
  } catch {
    throw new ConfigError(`--oidc-issuer ${JSON.stringify(issuer)} is not a URL`)
  }
  if (url.protocol !== 'https:') throw new ConfigError('--oidc-issuer must be an https URL')
  if (url.username || url.password || url.search || url.hash) throw new ConfigError('--oidc-issuer must not carry credentials, a query or a fragment')
  return { issuer, audience }
}

function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value)) if (child && typeof child === 'object') deepFreeze(child)
  return Object.freeze(value)
}
