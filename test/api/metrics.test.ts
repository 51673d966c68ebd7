// `serve --metrics`: Prometheus text at /metrics with per-route counters and latency histograms;
// without the flag the path does not exist.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { client, startServer, tenantFixture, type Server } from '../support/harness.ts'

const test = suite('api: metrics')
let server: Server

test.before(async () => {
  server = await startServer({ args: ['--metrics'] })
})
test.after(async () => {
  await server.stop()
})

test('counts requests by route pattern, method and status, with latency histograms', async () => {
  const api = client(server)
  const acme = await tenantFixture(server, 'acme')
  const key = await acme.key(['signals:read'])
  for (let i = 0; i < 3; i++) assert.is((await api('GET', '/api/v1/signals', { token: key })).status, 200)
  // Another last character (the key may end in x already).
  const wrong = `${key.slice(0, -1)}${key.endsWith('x') ? 'y' : 'x'}`
  assert.is((await api('GET', '/api/v1/signals', { token: wrong })).status, 401)
  assert.is((await api('DELETE', '/api/v1/auth/api-tokens/tok_nope', { token: acme.jwt })).status, 404)
  assert.ok(server.output().includes(`Metrics: ${server.url}/metrics`))
  const res = await api('GET', '/metrics')
  assert.is(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/)
  const text = res.text
  assert.match(text, /bulwark_http_requests_total\{method="GET",route="\/api\/v1\/signals",status="200"\} 3\n/)
  assert.match(text, /bulwark_http_requests_total\{method="GET",route="\/api\/v1\/signals",status="401"\} 1\n/)
  assert.match(text, /bulwark_http_requests_total\{method="DELETE",route="\/api\/v1\/auth\/api-tokens\/:id",status="404"\} 1\n/)
  assert.match(text, /bulwark_http_request_duration_seconds_count\{route="\/api\/v1\/signals"\} 4\n/)
  assert.match(text, /bulwark_http_request_duration_seconds_bucket\{route="\/api\/v1\/signals",le="\+Inf"\} 4\n/)
  assert.match(text, /bulwark_build_info\{version="\d+\.\d+\.\d+"\} 1/)
  assert.match(text, /bulwark_webhook_backlog \d+/)
  assert.match(text, /process_resident_memory_bytes \d+/)
  assert.not.ok(text.includes(key), 'no credential in metrics')
})

test('without --metrics there is no /metrics', async () => {
  const plain = await startServer()
  try {
    const res = await client(plain)('GET', '/metrics')
    assert.is(res.status, 404)
    assert.is(res.json.code, 'not_found')
  } finally {
    await plain.stop()
  }
})

test.run()
