// The real CLI (source through tsx, or the executable when BULWARK_BIN is set): help, version,
// exit codes, and the foundation subcommands on a real data dir.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openTestDatabase } from '../support/database.ts'
import { cli, databaseUrlFor, ROOT, tempDir } from '../support/harness.ts'

const test = suite('cli')
const dataDir = tempDir('cli')
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))

test('--version prints the package version', async () => {
  const res = await cli(['--version'])
  assert.is(res.code, 0)
  assert.is(res.stdout.trim(), pkg.version)
})

test('--help lists every subcommand with an example', async () => {
  const res = await cli(['--help'])
  assert.is(res.code, 0)
  for (const command of ['serve', 'tenant create', 'user create', 'token create', 'prices import']) {
    assert.ok(res.stdout.includes(`bulwark ${command}`), command)
  }
  assert.match(res.stdout, /Examples:/)
  const sub = await cli(['tenant', 'create', '--help'])
  assert.is(sub.code, 0)
  assert.match(sub.stdout, /bulwark tenant create acme --plan EXECUTE/)
})

test('bad usage exits 2 with a one-line error and the usage', async () => {
  for (const args of [
    ['tenant', 'create', 'acme', '--plan', 'GOLD'],
    ['tenant', 'create', 'acme', '--bogus'],
    ['tenant', 'create', '--plan', 'SIGNAL'],
    ['token', 'create', '--tenant', 'x', '--name', 'y', '--scopes', 'root'],
    ['serve', '--port', 'http'],
    ['frobnicate'],
    ['user', 'create', 'not-an-email', '--tenant', 'a', '--role', 'owner'],
  ]) {
    const res = await cli(args, { dataDir })
    assert.is(res.code, 2, args.join(' '))
    assert.match(res.stderr, /^error: .+\n/, args.join(' '))
    assert.match(res.stderr, /usage|Usage/)
  }
})

test('tenant, user and token creation; duplicates fail with exit 1', async () => {
  let res = await cli(['tenant', 'create', 'acme', '--plan', 'EXECUTE', '--max-open-trades', '3', '--max-exposure-usd', '5000'], { dataDir })
  assert.is(res.code, 0, res.stderr)
  res = await cli(['tenant', 'create', 'acme', '--plan', 'SIGNAL'], { dataDir })
  assert.is(res.code, 1)
  assert.match(res.stderr, /already exists/)

  res = await cli(['user', 'create', 'Ops@Acme.test', '--tenant', 'acme', '--role', 'admin'], { dataDir })
  assert.is(res.code, 0, res.stderr)
  const password = /password \(shown once\): (\S+)/.exec(res.stdout)?.[1]
  assert.ok(password && password.length >= 16)
  res = await cli(['user', 'create', 'x@acme.test', '--tenant', 'nope', '--role', 'owner'], { dataDir })
  assert.is(res.code, 1)
  res = await cli(['user', 'create', 'short@acme.test', '--tenant', 'acme', '--role', 'owner', '--password-stdin'], { dataDir, input: 'abc' })
  assert.is(res.code, 1)

  res = await cli(['token', 'create', '--tenant', 'acme', '--name', 'bot', '--scopes', 'signals:read,trades:read'], { dataDir })
  assert.is(res.code, 0, res.stderr)
  const key = res.stdout.trim()
  assert.match(key, /^sk_live_[0-9A-Za-z]{38}$/)

  const db = await openTestDatabase(dataDir, { readonly: true })
  const profile = await db.get('SELECT p.* FROM risk_profiles p JOIN tenants t ON t.id = p.tenant_id WHERE t.slug = ?', ['acme'])
  assert.is(profile.max_open_trades, 3)
  assert.is(profile.max_exposure_usd, 5000)
  const user = await db.get('SELECT * FROM users WHERE email = ?', ['ops@acme.test'])
  assert.match(user.password_hash, /^scrypt\$/)
  assert.not.ok(user.password_hash.includes(password!))
  const stored = await db.all('SELECT * FROM api_keys')
  assert.is(stored.length, 1)
  assert.not.ok(JSON.stringify(stored).includes(key))
  await db.close()
})

test('BULWARK_DATA_DIR is honoured', async () => {
  const dir = tempDir('envdir')
  // The harness gives a command its data dir's database only from --data-dir or its own option: on
  // PostgreSQL, the database of this one is named here (the data dir still holds the key files).
  const url = await databaseUrlFor(dir)
  const res = await cli(['tenant', 'create', 'envy', '--plan', 'SIGNAL'], { env: { BULWARK_DATA_DIR: dir, ...(url ? { BULWARK_DATABASE_URL: url } : {}) } })
  assert.is(res.code, 0, res.stderr)
  const db = await openTestDatabase(dir, { readonly: true })
  assert.ok(await db.get("SELECT 1 FROM tenants WHERE slug = 'envy'"))
  await db.close()
})

test('prices import: all or nothing, bad rows named by line', async () => {
  const good = join(dataDir, 'good.csv')
  writeFileSync(good, 'pair,date,open,high,low,close,volume\nBTC/USDT,2026-11-20,100,110,90,105,1000\nBTC/USDT,2026-11-21,105,112,100,111,900\n')
  let res = await cli(['prices', 'import', good], { dataDir })
  assert.is(res.code, 0, res.stderr)
  assert.match(res.stdout, /imported 2 candles for 1 pairs/)
  const bad = join(dataDir, 'bad.csv')
  writeFileSync(
    bad,
    'pair,date,open,high,low,close,volume\nETH/USDT,2026-11-20,10,11,9,10.5,1\nETH/USDT,2026-02-30,10,11,9,10,1\nETH/USDT,2026-11-22,10,11,9,abc,1\n',
  )
  res = await cli(['prices', 'import', bad], { dataDir })
  assert.is(res.code, 1)
  assert.match(res.stderr, /line 3: date/)
  assert.match(res.stderr, /line 4: close/)
  const db = await openTestDatabase(dataDir, { readonly: true })
  assert.is((await db.get("SELECT count(*) AS n FROM prices WHERE pair = 'ETH/USDT'")).n, 0)
  await db.close()
})

test.run()
