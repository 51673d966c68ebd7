// `serve`'s start banner names every page and document the server answers: the first line stays
// "Bulwark x.y.z serving BASE" (what scripts and the harness wait for), then the API, health,
// OpenAPI, the console, the public page and its JSON (unless --no-public-feed), metrics (with
// --metrics) and the data dir; each URL printed answers, and nothing is printed that does not.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { client, ROOT, startServer, type Server } from '../support/harness.ts'

const test = suite('cli: the serve banner')
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))

/** The banner's "  Name:  value" lines, by name, in the order printed. */
function banner(server: Server): [string, string][] {
  const lines = server.output().split('\n')
  const first = lines.findIndex((l) => l.startsWith('Bulwark '))
  assert.ok(first >= 0, server.output())
  assert.is(lines[first], `Bulwark ${pkg.version} serving ${server.url}`)
  const named: [string, string][] = []
  for (const line of lines.slice(first + 1)) {
    const m = /^ {2}(\w+): +(.+)$/.exec(line)
    if (!m) break
    named.push([m[1], m[2]])
  }
  return named
}

/** Every URL a banner value names (a line may name two). */
const urls = (value: string) => value.match(/http:\/\/\S+/g) ?? []

test('every page with --metrics: each URL answers 200', async () => {
  const server = await startServer({ args: ['--metrics', '--quiet'] })
  try {
    const lines = banner(server)
    const base = server.url
    assert.equal(
      lines.map(([name]) => name),
      ['API', 'Health', 'OpenAPI', 'Console', 'Feed', 'Public', 'Metrics', 'Data'],
    )
    const by = Object.fromEntries(lines)
    assert.is(by.API, `${base}/api/v1`)
    assert.is(by.Health, `${base}/api/v1/health`)
    assert.is(by.OpenAPI, `${base}/api/v1/openapi.json`)
    assert.is(by.Console, `${base}/console`)
    assert.is(urls(by.Feed)[0], `${base}/`)
    assert.equal(urls(by.Public), [`${base}/api/v1/public/signals`, `${base}/api/v1/public/models`])
    assert.is(by.Metrics, `${base}/metrics`)
    assert.is(by.Data, server.dataDir)
    const api = client(server)
    for (const url of lines.filter(([name]) => name !== 'API' && name !== 'Data').flatMap(([, value]) => urls(value))) {
      const res = await api('GET', url.slice(base.length))
      assert.is(res.status, 200, url)
    }
    const shell = await api('GET', '/console')
    assert.match(shell.headers.get('content-type') ?? '', /^text\/html/)
  } finally {
    await server.stop()
  }
})

test('--no-public-feed and no --metrics: the console is named, the feed and metrics are not', async () => {
  const server = await startServer({ args: ['--no-public-feed', '--quiet'] })
  try {
    const lines = banner(server)
    assert.equal(
      lines.map(([name]) => name),
      ['API', 'Health', 'OpenAPI', 'Console', 'Data'],
    )
    assert.is(Object.fromEntries(lines).Console, `${server.url}/console`)
    assert.is((await client(server)('GET', '/console')).status, 200)
    for (const path of ['/', '/api/v1/public/signals', '/api/v1/public/models', '/metrics']) {
      assert.is((await client(server)('GET', path)).status, 404, path)
    }
  } finally {
    await server.stop()
  }
})

test.run()
