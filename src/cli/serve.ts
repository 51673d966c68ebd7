import type { AddressInfo } from 'node:net'
import { parseArgs } from './args.ts'
import type { CliCommand } from './command.ts'
import { openApp } from '../app.ts'
import { ConfigError, SERVE_FLAGS, serveConfig, type Config } from '../config.ts'
import { cidrList } from '../shared/cidr.ts'
import { createHttpServer } from '../http/server.ts'
import { log } from '../shared/log.ts'
import { VERSION } from '../version.ts'
import { loadDemo } from '../signals/demo.ts'
import { setDemoBreakers } from '../risk/demo-breakers.ts'
import { acquireInstanceLock } from '../store/instance-lock.ts'
import { checkIncidentTriggers } from '../risk/integrity.ts'
import { settleCancellations } from '../trading/cancellations.ts'
import { checkSignalTriggers } from '../signals/chain-integrity.ts'
import { unknownExchange } from '../venues/exchange-ids.ts'
import { startStep, startSteps } from './start-trace.ts'

/**
 * With BULWARK_START_TRACE set, one log line of the start's steps, in ms since the process began
 * (process.uptime()): what test/bench/startup.ts reads to see what each step costs.
 */
function traceStart(): void {
  startStep('banner')
  log({ level: 'info', msg: 'start trace', ...startSteps() })
}

export const serve: CliCommand = {
  name: 'serve',
  usage:
    'bulwark serve [--host 127.0.0.1] [--port 8080] [--data-dir DIR] [--secrets-dir DIR] [--database URL] [--demo] [--no-public-feed] [--rate-limit N] [--login-rate-limit N] [--quiet] [--metrics] [--webhook-allow-cidr CIDR]... [--webhook-ca-file FILE] [--oidc-issuer URL --oidc-audience AUD] [--trusted-proxy CIDR]... [--retention-days 30] [--market-data EXCHANGE] [--venue-url URL] [--ca-file FILE] [--public-url URL]',
  summary: 'run the HTTP API, the daily publisher and the webhook sender',
  examples: [
    'bulwark serve',
    'bulwark serve --host 0.0.0.0 --port 9000 --data-dir /var/lib/bulwark',
    'bulwark serve --demo',
    'bulwark serve --oidc-issuer https://login.example.com/realms/desk --oidc-audience bulwark',
    'bulwark serve --market-data binance',
    'bulwark serve --market-data binance --venue-url https://127.0.0.1:9443 --ca-file lan-ca.pem',
    'bulwark serve --host 10.0.0.5 --public-url https://alerts.example.com --trusted-proxy 10.0.0.2/32',
  ],
  async run(argv) {
    const args = parseArgs(argv, SERVE_FLAGS)
    const config = serveConfig(args.flags)
    if (args.positional.length) throw new ConfigError(`unexpected argument ${args.positional[0]}`)
    // Known before anything starts: an unknown exchange would otherwise be retried forever.
    const unknown = config.marketData === undefined ? undefined : await unknownExchange(config.marketData)
    if (unknown) throw new ConfigError(`--market-data ${unknown}`)
    const dataDir = config.dataDir
    const releaseLock = acquireInstanceLock(dataDir)
    startStep('locked')
    const app = await openApp(config)
    startStep('app-open')
    await checkIncidentTriggers(app.store, new Date())
    // What a crash left of a kill switch's cancellations is settled before the first answer on
    // SQLite (a fraction of a second for 20,000 orders); on PostgreSQL, whose round trips make that
    // seconds, by the settlement service right after start. Either way every reader sees them
    // canceled from the switch's commit on (the fence).
    if (app.store.engine === 'sqlite') await settleCancellations(app.store)
    await checkSignalTriggers(app.store)
    startStep('triggers-checked')
    const demoLines = config.demo ? await loadDemo(app.store, new Date(), setDemoBreakers) : []
    startStep('demo-loaded')
    const trustedProxies = cidrList(config.trustedProxies, '--trusted-proxy')
    const server = createHttpServer(app.routes, {
      ratePerMinute: config.ratePerMinute,
      loginPerMinute: config.loginPerMinute,
      trustedProxies,
      mounts: app.mounts(trustedProxies),
      quiet: config.quiet,
      observe: app.observe,
      guard: app.guard,
      secrets: app.secrets(),
      store: app.store,
    })
    startStep('server-made')
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(config.port, config.host, () => resolve())
    })
    const address = server.address() as AddressInfo
    const base = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
    startStep('listening')
    const stops = app.services.map((service) => service.start({ dataDir, store: app.store }))
    startStep('services-started')
    return new Promise<number>((resolve) => {
      let stopping = false
      const stop = (signal: string) => {
        if (stopping) return
        stopping = true
        log({ level: 'info', msg: 'shutting down', signal })
        // Requests get 6 s to finish; the services then stop in at most 2 s (the webhook sender's
        // wait for in-flight deliveries), so the process is out well within 10 s.
        const force = setTimeout(() => server.closeAllConnections(), 6000)
        server.close(async () => {
          clearTimeout(force)
          for (const stopService of stops.reverse()) await stopService()
          await app.close()
          releaseLock()
          resolve(0)
        })
        server.closeIdleConnections()
      }
      // `on`, not `once`: a second signal (systemd, litestream -exec) must not kill a clean drain.
      process.on('SIGTERM', () => stop('SIGTERM'))
      process.on('SIGINT', () => stop('SIGINT'))
      // The banner says "ready" to whoever waits for it, so it comes after the handlers: a SIGTERM
      // sent the moment it is read drains cleanly instead of meeting the default action.
      process.stdout.write([...bannerLines(base, config), ...demoLines].map((line) => `${line}\n`).join(''))
      if (process.env.BULWARK_START_TRACE) traceStart()
    })
  },
}

/**
 * The start banner: its first line "Bulwark x.y.z serving BASE" is what scripts and the test harness
 * wait for (the first http:// URL printed), then every page and document this server answers, each
 * only when its flag has it on, and the data dir.
 */
export function bannerLines(base: string, config: Pick<Config, 'publicFeed' | 'metrics' | 'dataDir'>): string[] {
  return [
    `Bulwark ${VERSION} serving ${base}`,
    `  API:     ${base}/api/v1`,
    `  Health:  ${base}/api/v1/health`,
    `  OpenAPI: ${base}/api/v1/openapi.json`,
    `  Console: ${base}/console`,
    ...(config.publicFeed
      ? [`  Feed:    ${base}/ (the public page)`, `  Public:  ${base}/api/v1/public/signals and ${base}/api/v1/public/models (JSON, no credential)`]
      : []),
    ...(config.metrics ? [`  Metrics: ${base}/metrics`] : []),
    `  Data:    ${config.dataDir}`,
  ]
}
