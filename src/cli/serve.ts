import type { AddressInfo, BlockList } from 'node:net'
import { parseArgs, str, positiveNumber, UsageError } from './args.ts'
import { dataDirFrom, type CliCommand } from './command.ts'
import { closeDatabase } from '../store/db.ts'
import { waitForLocksAsynchronously } from '../store/write-queue.ts'
import { loadSecretKey } from '../store/secret-box.ts'
import { cidrList } from '../shared/cidr.ts'
import { loadSigningKey } from '../auth/sessions.ts'
import { configureOidc } from '../auth/oidc.ts'
import { createHttpServer } from '../http/server.ts'
import { log } from '../http/log.ts'
import { VERSION } from '../version.ts'
import { openApp } from '../app.ts'
import { configureWebhooks } from '../webhooks/config.ts'
import { publicFeed } from '../signals/feed-config.ts'
import { loadDemo } from '../signals/demo.ts'
import { acquireInstanceLock } from '../store/instance-lock.ts'
import { retention } from '../store/retention.ts'
import { metricsConfig } from '../system/metrics.ts'
import { checkIncidentTriggers } from '../risk/integrity.ts'

const FLAGS = { host: 'string', port: 'string', 'data-dir': 'string', demo: 'boolean', 'no-public-feed': 'boolean', 'rate-limit': 'string', 'login-rate-limit': 'string', quiet: 'boolean', metrics: 'boolean', 'webhook-allow-cidr': 'list', 'webhook-ca-file': 'string', 'oidc-issuer': 'string', 'oidc-audience': 'string', 'trusted-proxy': 'list', 'retention-days': 'string' } as const

export const serve: CliCommand = {
  name: 'serve',
  usage: 'bulwark serve [--host 127.0.0.1] [--port 8080] [--data-dir DIR] [--demo] [--no-public-feed] [--rate-limit N] [--login-rate-limit N] [--quiet] [--metrics] [--webhook-allow-cidr CIDR]... [--webhook-ca-file FILE] [--oidc-issuer URL --oidc-audience AUD] [--trusted-proxy CIDR]... [--retention-days 30]',
  summary: 'run the HTTP API, the daily publisher and the webhook sender',
  examples: ['bulwark serve', 'bulwark serve --host 0.0.0.0 --port 9000 --data-dir /var/lib/bulwark', 'bulwark serve --demo', 'bulwark serve --oidc-issuer https://login.example.com/realms/desk --oidc-audience bulwark'],
  async run(argv) {
    const args = parseArgs(argv, FLAGS)
    try { configureWebhooks({ allowCidrs: (args.flags['webhook-allow-cidr'] as string[] | undefined) ?? [], caFile: str(args, 'webhook-ca-file') }) } catch (error) { throw new UsageError((error as Error).message) }
    try { configureOidc(str(args, 'oidc-issuer'), str(args, 'oidc-audience')) } catch (error) { throw new UsageError((error as Error).message) }
    let trustedProxies: BlockList | undefined
    try { trustedProxies = cidrList((args.flags['trusted-proxy'] as string[] | undefined) ?? [], '--trusted-proxy') } catch (error) { throw new UsageError((error as Error).message) }
    if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`)
    const host = str(args, 'host') ?? '127.0.0.1'
    const portText = str(args, 'port') ?? '8080'
    const port = Number(portText)
    if (!/^\d+$/.test(portText) || port > 65535) throw new UsageError('--port must be an integer 0-65535')
    const retentionText = str(args, 'retention-days') ?? '30'
    if (!/^\d{1,4}$/.test(retentionText) || +retentionText < 1 || +retentionText > 3650) throw new UsageError('--retention-days must be an integer 1-3650')
    retention.days = Number(retentionText)
    const dataDir = dataDirFrom(str(args, 'data-dir'))
    const releaseLock = acquireInstanceLock(dataDir)
    const demo = args.flags.demo === true
    const app = openApp({ dataDir, demo })
    checkIncidentTriggers(new Date())
    loadSigningKey(dataDir)
    loadSecretKey(dataDir)
    publicFeed.enabled = args.flags['no-public-feed'] !== true
    metricsConfig.enabled = args.flags.metrics === true
    const demoLines = demo ? await loadDemo() : []
    // From here on, requests are served: a lock held by another process is waited for without
    // blocking them (start-up's own writes above could wait the usual 5 s).
    waitForLocksAsynchronously()
    const server = createHttpServer(app.routes, {
      ratePerMinute: positiveNumber(args, 'rate-limit', true) ?? 1200,
      loginPerMinute: positiveNumber(args, 'login-rate-limit', true) ?? 10,
      trustedProxies,
      quiet: args.flags.quiet === true,
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => resolve())
    })
    const address = server.address() as AddressInfo
    const base = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
    const stops = app.services.map((service) => service.start({ dataDir }))
    process.stdout.write(`Bulwark ${VERSION} serving ${base}\n  API:     ${base}/api/v1\n  Health:  ${base}/api/v1/health\n  OpenAPI: ${base}/api/v1/openapi.json\n  Data:    ${dataDir}\n` +
      (publicFeed.enabled ? `  Feed:    ${base}/\n` : '') + (metricsConfig.enabled ? `  Metrics: ${base}/metrics\n` : '') + demoLines.map((line) => line + '\n').join(''))

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
          closeDatabase()
          releaseLock()
          resolve(0)
        })
        server.closeIdleConnections()
      }
      // `on`, not `once`: a second signal (systemd, litestream -exec) must not kill a clean drain.
      process.on('SIGTERM', () => stop('SIGTERM'))
      process.on('SIGINT', () => stop('SIGINT'))
    })
  },
}
