// `bulwark gateway key create|list|revoke` through the real executable on a real data dir: a tenant
// whose Binance venue is connected through `bulwark venue connect` (the test venue checks the key)
// gets a key and a secret printed once, which findGatewayKey (what the Binance dialect signs with)
// then finds; the list never shows them; revoking ends the key at once and again changes nothing;
// without a venue, an unknown tenant or key: exit 1; bad usage: exit 2 with the usage.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { findGatewayKey } from '../../src/gateway/keys.ts'
import { openStore } from '../../src/store/open-store.ts'
import { openSecretBox } from '../../src/store/secret-box.ts'
import { openTestDatabase } from '../support/database.ts'
import { cli, databaseUrlFor, tempDir } from '../support/harness.ts'
import { startVenue, venueKey, type Venue } from '../support/venue/index.ts'

const test = suite('cli: gateway keys')
const dataDir = tempDir('cli-gateway')
let venue: Venue
const run = (args: string[], input?: string) => cli(args, { dataDir, input })

/** What `gateway key create` printed on stdout: its `name: value` lines. */
function printed(stdout: string): Record<string, string> {
  return Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map((line) => line.split(': ', 2) as [string, string]),
  )
}

async function lookUp(apiKey: string) {
  const store = await openStore({ dataDir, databaseUrl: await databaseUrlFor(dataDir) })
  try {
    return await findGatewayKey(store.read, apiKey, openSecretBox(dataDir))
  } finally {
    await store.close()
  }
}

test.before(async () => {
  venue = await startVenue()
  for (const slug of ['acme', 'nova']) assert.is((await run(['tenant', 'create', slug, '--plan', 'EXECUTE'])).code, 0)
  const key = venueKey('acme', 'acme')
  await venue.addKey({ ...key, restrictions: { enableWithdrawals: false } })
  const connected = await run(
    ['venue', 'connect', '--tenant', 'acme', '--exchange', 'binance', '--api-key', key.apiKey, '--venue-url', venue.url, '--ca-file', venue.caFile],
    `${key.secret}\n`,
  )
  assert.is(connected.code, 0, connected.stderr)
})
test.after(async () => {
  await venue?.close()
})

let made: Record<string, string>

test('create prints the id, api_key and api_secret once; findGatewayKey finds the key with that secret', async () => {
  const res = await run(['gateway', 'key', 'create', '--tenant', 'acme', '--name', 'freqtrade main'])
  assert.is(res.code, 0, res.stderr)
  made = printed(res.stdout)
  assert.equal(Object.keys(made), ['id', 'api_key', 'api_secret'])
  assert.match(made.id, /^gwk_[0-9A-HJKMNP-TV-Z]{26}$/)
  assert.match(made.api_key, /^[0-9A-Za-z]{64}$/)
  assert.match(made.api_secret, /^[0-9A-Za-z]{64}$/)
  assert.match(res.stderr, new RegExp(`^created gateway key ${made.id} \\(freqtrade main\\) for tenant acme; the secret is shown only this once\\.`))
  assert.match(res.stderr, /\/gateway\/binance\/api\/v3/)
  const found = await lookUp(made.api_key)
  assert.is(found?.id, made.id)
  assert.is(found?.name, 'freqtrade main')
  assert.is(found?.secret, made.api_secret)
  // At rest: neither in clear.
  const db = await openTestDatabase(dataDir, { readonly: true })
  try {
    const row = JSON.stringify(await db.get('SELECT * FROM gateway_keys WHERE id = ?', [made.id]))
    assert.not.ok(row.includes(made.api_key) || row.includes(made.api_secret), row)
  } finally {
    await db.close()
  }
})

test('list shows id, prefix, created, state and name, newest first; never the key or the secret', async () => {
  const second = await run(['gateway', 'key', 'create', '--tenant', 'acme', '--name', 'jesse'])
  assert.is(second.code, 0, second.stderr)
  const other = printed(second.stdout)
  const res = await run(['gateway', 'key', 'list', '--tenant', 'acme'])
  assert.is(res.code, 0, res.stderr)
  const lines = res.stdout.trimEnd().split('\n')
  assert.is(lines.length, 2, res.stdout)
  assert.match(lines[0], new RegExp(`^${other.id}  ${other.api_key.slice(0, 8)}\\.\\.\\.  \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  active  jesse$`))
  assert.match(lines[1], new RegExp(`^${made.id}  ${made.api_key.slice(0, 8)}\\.\\.\\.  \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  active  freqtrade main$`))
  for (const secret of [made.api_key, made.api_secret, other.api_key, other.api_secret]) assert.not.ok(res.stdout.includes(secret))
  const none = await run(['gateway', 'key', 'list', '--tenant', 'nova'])
  assert.is(none.code, 0, none.stderr)
  assert.is(none.stdout, 'nova: no gateway key\n')
})

test('revoke ends the key at once; revoking again keeps the first time; the list says so', async () => {
  const res = await run(['gateway', 'key', 'revoke', '--tenant', 'acme', made.id])
  assert.is(res.code, 0, res.stderr)
  const at = new RegExp(`^acme: gateway key ${made.id} \\(freqtrade main\\) revoked at (\\S+Z)\\n$`).exec(res.stdout)
  assert.ok(at, res.stdout)
  assert.is(await lookUp(made.api_key), undefined)
  const again = await run(['gateway', 'key', 'revoke', '--tenant', 'acme', made.id])
  assert.is(again.code, 0, again.stderr)
  assert.is(again.stdout, res.stdout)
  const listed = await run(['gateway', 'key', 'list', '--tenant', 'acme'])
  assert.ok(listed.stdout.trimEnd().split('\n')[1].endsWith(`  revoked ${at![1]}  freqtrade main`), listed.stdout)
})

test('refusals: no venue, no such tenant, a key of another tenant or none (exit 1); bad usage (exit 2)', async () => {
  const noVenue = await run(['gateway', 'key', 'create', '--tenant', 'nova', '--name', 'bot'])
  assert.is(noVenue.code, 1)
  assert.is(noVenue.stderr, 'error: nova: the gateway needs a connected binance venue: connect one with PUT /api/v1/venue first\n')
  assert.is(noVenue.stdout, '')
  assert.is((await run(['gateway', 'key', 'list', '--tenant', 'nova'])).stdout, 'nova: no gateway key\n', 'nothing made')
  const noTenant = await run(['gateway', 'key', 'create', '--tenant', 'nobody', '--name', 'bot'])
  assert.is(noTenant.code, 1)
  assert.is(noTenant.stderr, 'error: no tenant nobody\n')
  const otherTenant = await run(['gateway', 'key', 'revoke', '--tenant', 'nova', made.id])
  assert.is(otherTenant.code, 1)
  assert.is(otherTenant.stderr, `error: tenant nova has no gateway key ${made.id}\n`)
  const notAnId = await run(['gateway', 'key', 'revoke', '--tenant', 'acme', 'tok_01M80000000000000000000000'])
  assert.is(notAnId.code, 1)
  for (const [args, message] of [
    [['gateway', 'key', 'create', '--tenant', 'acme'], '--name is required'],
    [['gateway', 'key', 'create', '--name', 'bot'], '--tenant is required'],
    [['gateway', 'key', 'create', '--tenant', 'acme', '--name', 'x'.repeat(101)], '--name must be at most 100 characters'],
    [['gateway', 'key', 'create', '--tenant', 'acme', '--name', 'bot', 'extra'], 'unexpected argument extra'],
    [['gateway', 'key', 'revoke', '--tenant', 'acme'], 'KEY_ID is required'],
    [['gateway', 'key', 'revoke', '--tenant', 'acme', 'gwk_a', 'gwk_b'], 'unexpected argument gwk_b'],
    [['gateway', 'key', 'list', '--tenant', 'acme', '--bogus'], 'unknown flag --bogus'],
  ] as const) {
    const res = await run([...args])
    assert.is(res.code, 2, `${args.join(' ')}: ${res.stderr}`)
    const [first, second] = res.stderr.split('\n')
    assert.is(first, `error: ${message}`, args.join(' '))
    assert.match(second, /^usage: bulwark gateway key (create|list|revoke) --tenant SLUG/)
  }
})

test('--help names the three commands, each with its usage and example', async () => {
  const help = await cli(['--help'])
  for (const line of [
    'bulwark gateway key create --tenant SLUG --name LABEL',
    'bulwark gateway key list --tenant SLUG',
    'bulwark gateway key revoke --tenant SLUG KEY_ID',
  ]) {
    assert.ok(help.stdout.includes(line), line)
  }
  const one = await cli(['gateway', 'key', 'create', '--help'])
  assert.is(one.code, 0)
  assert.match(one.stdout, /^Usage: bulwark gateway key create --tenant SLUG --name LABEL/)
  assert.match(one.stdout, /bulwark gateway key create --tenant acme --name freqtrade/)
})

test.run()
