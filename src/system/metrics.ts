// Prometheus text exposition (format 0.0.4) at GET /metrics, served only with `serve --metrics`:
// requests by route, method and status, latency histograms by route, and the service's own gauges.
// Route labels are patterns (/api/v1/orders/:id), never concrete paths, so cardinality stays fixed.
import { defineRoute, Raw, type RouteSpec } from '../http/route.ts'
import { DomainError } from '../shared/errors.ts'
import type { Queries } from '../store/store.ts'
import { VERSION } from '../version.ts'
import type { HealthSources } from './health.ts'

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

interface Histogram {
  counts: number[]
  sum: number
  count: number
}
const requests = new Map<string, number>()
const latency = new Map<string, Histogram>()

export function observeRequest(method: string, route: string, status: number, seconds: number): void {
  const key = `${method}\u0000${route}\u0000${status}`
  requests.set(key, (requests.get(key) ?? 0) + 1)
  let histogram = latency.get(route)
  if (!histogram) {
    histogram = { counts: BUCKETS.map(() => 0), sum: 0, count: 0 }
    latency.set(route, histogram)
  }
  for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]) histogram.counts[i]++
  histogram.sum += seconds
  histogram.count++
}

const label = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')

async function metricsText(db: Queries, sources: HealthSources): Promise<string> {
  const out: string[] = [
    '# HELP bulwark_build_info The running version.',
    '# TYPE bulwark_build_info gauge',
    `bulwark_build_info{version="${VERSION}"} 1`,
    '# HELP bulwark_http_requests_total HTTP requests answered, by route pattern, method and status.',
    '# TYPE bulwark_http_requests_total counter',
  ]
  for (const [key, count] of requests) {
    const [method, route, status] = key.split('\u0000')
    out.push(`bulwark_http_requests_total{method="${label(method)}",route="${label(route)}",status="${status}"} ${count}`)
  }
  out.push(
    '# HELP bulwark_http_request_duration_seconds Time from arrival to answer, by route pattern.',
    '# TYPE bulwark_http_request_duration_seconds histogram',
  )
  for (const [route, h] of latency) {
    const r = label(route)
    BUCKETS.forEach((le, i) => {
      out.push(`bulwark_http_request_duration_seconds_bucket{route="${r}",le="${le}"} ${h.counts[i]}`)
    })
    out.push(`bulwark_http_request_duration_seconds_bucket{route="${r}",le="+Inf"} ${h.count}`)
    out.push(`bulwark_http_request_duration_seconds_sum{route="${r}"} ${h.sum}`, `bulwark_http_request_duration_seconds_count{route="${r}"} ${h.count}`)
  }
  const next = await sources.nextPublishAt(db)
  out.push(
    '# HELP bulwark_webhook_backlog Pending webhook deliveries of active endpoints.',
    '# TYPE bulwark_webhook_backlog gauge',
    `bulwark_webhook_backlog ${await sources.webhookBacklog(db)}`,
    '# HELP bulwark_next_publish_timestamp_seconds When the publisher runs next (Unix time).',
    '# TYPE bulwark_next_publish_timestamp_seconds gauge',
    `bulwark_next_publish_timestamp_seconds ${next ? Date.parse(next) / 1000 : 0}`,
    '# HELP process_resident_memory_bytes Resident memory size in bytes.',
    '# TYPE process_resident_memory_bytes gauge',
    `process_resident_memory_bytes ${process.memoryUsage.rss()}`,
  )
  return `${out.join('\n')}\n`
}

/** GET /metrics: Prometheus text when `enabled` (serve --metrics), else 404. */
export function metricsRoutes(enabled: boolean, sources: HealthSources): RouteSpec[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/metrics',
      summary: 'Prometheus metrics (serve --metrics)',
      tag: 'system',
      access: 'public',
      hidden: true,
      response: null,
      contentType: 'text/plain; version=0.0.4',
      handler: async (ctx) => {
        if (!enabled) throw new DomainError('not_found', 'metrics are off on this server; start it with --metrics')
        return new Raw(200, 'text/plain; version=0.0.4; charset=utf-8', await metricsText(ctx.db, sources))
      },
    }),
  ]
}
