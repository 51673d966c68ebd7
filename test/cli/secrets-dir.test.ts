// The secrets every node must share (SPEC 15): --secrets-dir (env BULWARK_SECRETS_DIR, default the
// data dir) holds the sealing key and the session signing key; the first command that opens a
// database records their fingerprint, and a node given other secrets exits 1 before it listens,
// with one line naming the mismatch. Through the real commands on real data dirs.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { cli, startServer, tempDir } from '../support/harness.ts'
import { withDb } from '../trading/market.ts'

const test = suite('cli: the shared secrets and their fingerprint')

test('the keys live in --secrets-dir, and the database records their fingerprint once', async () => {
  const dataDir = tempDir('data')
  const secrets = tempDir('secrets')
  const made = await cli(['tenant', 'create', 'acme', '--plan', 'EXECUTE', '--secrets-dir', secrets], { dataDir })
  assert.is(made.code, 0, made.stderr)
  assert.equal(readdirSync(secrets).sort(), ['jwt-signing.key', 'secrets.fingerprint', 'secrets.key'])
  assert.not.ok(existsSync(join(dataDir, 'secrets.key')), 'no key beside the database')
  const recorded = await withDb({ dataDir }, (db) => db.all("SELECT value FROM store_meta WHERE key = 'secrets_fingerprint'"))
  assert.is(recorded.length, 1)
  assert.match((recorded[0] as { value: string }).value, /^[0-9a-f]{16}$/)

  // The same secrets through the environment: accepted, and a server on them answers.
  const again = await cli(['user', 'create', 'o@acme.test', '--tenant', 'acme', '--role', 'owner', '--password-stdin'], {
    dataDir,
    input: 'correct horse battery staple',
    env: { BULWARK_SECRETS_DIR: secrets },
  })
  assert.is(again.code, 0, again.stderr)
  const server = await startServer({ dataDir, args: ['--secrets-dir', secrets] })
  try {
    const login = await fetch(`${server.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'o@acme.test', password: 'correct horse battery staple' }),
    })
    assert.is(login.status, 200, await login.text())
  } finally {
    await server.stop()
  }
})

test('a node given other secrets exits 1 before it listens, with one line naming the mismatch; nothing is changed', async () => {
  const dataDir = tempDir('data')
  const secrets = tempDir('secrets')
  assert.is((await cli(['tenant', 'create', 'acme', '--plan', 'EXECUTE', '--secrets-dir', secrets], { dataDir })).code, 0)
  const other = tempDir('other')
  for (const args of [
    ['serve', '--port', '0', '--secrets-dir', other],
    ['serve', '--port', '0'], // the data dir's own keys, made now: not the ones recorded
    ['tenant', 'create', 'zeta', '--plan', 'SIGNAL', '--secrets-dir', other],
  ]) {
    const res = await cli(args, { dataDir })
    assert.is(res.code, 1, `${args.join(' ')}: ${res.stdout}${res.stderr}`)
    const lines = res.stderr.trimEnd().split('\n')
    assert.is(lines.length, 1, res.stderr)
    assert.match(
      lines[0],
      /^error: the secrets in \/.* \(fingerprint [0-9a-f]{16}\) are not the ones this database was first opened with \(fingerprint [0-9a-f]{16}\)/,
    )
    assert.not.match(res.stdout, /listening|http:\/\//, 'never listened')
  }
  const tenants = await withDb({ dataDir }, (db) => db.all('SELECT slug FROM tenants ORDER BY slug'))
  assert.equal(tenants, [{ slug: 'acme' }], 'the refused command wrote nothing')

  // The old secrets lost (a restore on a new machine): the operator adopts the new ones, knowingly.
  const adopted = await cli(['store', 'adopt-secrets', '--secrets-dir', other], { dataDir })
  assert.is(adopted.code, 0, adopted.stderr)
  assert.match(adopted.stdout, /now takes the secrets in .* \(fingerprint [0-9a-f]{16} -> [0-9a-f]{16}\)\nwhat the old sealing key sealed no longer opens/)
  const server = await startServer({ dataDir, args: ['--secrets-dir', other] })
  assert.is((await fetch(`${server.url}/api/v1/health`)).status, 200)
  await server.stop()
  assert.is((await cli(['tenant', 'create', 'zeta', '--plan', 'SIGNAL', '--secrets-dir', secrets], { dataDir })).code, 1, 'the old ones no longer')
})

test.run()
