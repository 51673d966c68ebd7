// The signal chain (SPEC 11): every published signal's hash recomputed here from the export with
// this file's own few lines; the head carried by signal.published equals the public one; triggers
// refuse UPDATE and DELETE; behind dropped triggers an edit, a deletion and an insertion are each
// named by `signals verify`, locally and offline on an export checked against the head taken before;
// a truncation passes a plain verify and fails --head; serve puts dropped triggers back; signals
// written before the chain are back-filled to the very same hashes.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createHash } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { copyDataDir, openTestDatabase, type TestDatabase } from '../support/database.ts'
import { cli, client, ENGINE, login, startServer, tempDir, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { ALL_PAIRS, importSeries, query } from './fixtures.ts'

const test = suite('signals: the signal chain')
const GENESIS = '0'.repeat(64)
const MODEL = 'trend-follower'
const RUNS = ['2025-06-29', '2025-06-30', '2025-07-01'] // 5 signals each, as of the day before
let server: Server
let dataDir: string
let acme: TenantFixture
let exported: any
let publicHead: any
let triggers: { name: string; sql: string }[]

/** RFC 8785 for what a signal holds (strings, finite numbers, flat objects): sorted keys, no spaces. */
const canonical = (o: Record<string, unknown>) =>
  `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${JSON.stringify(o[k])}`)
    .join(',')}}`
const FIELDS = ['id', 'model_id', 'model_version', 'model_hash', 'pair', 'action', 'entry_price', 'as_of', 'created_at']
const oracleHash = (prev: string, s: any) =>
  createHash('sha256')
    .update(`${prev}\n${canonical(Object.fromEntries(FIELDS.map((f) => [f, s[f]])))}`)
    .digest('hex')

const verify = (dir: string, ...args: string[]) => cli(['signals', 'verify', ...args], { dataDir: dir })
/** The triggers on signals, name and definition, as the engine keeps them. */
async function triggersOf(dir: string): Promise<{ name: string; sql: string }[]> {
  const db = await openTestDatabase(dir, { readonly: true })
  try {
    return await db.all(
      db.engine === 'sqlite'
        ? "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'signals' ORDER BY name"
        : "SELECT tgname AS name, pg_get_triggerdef(oid) AS sql FROM pg_trigger WHERE tgrelid = 'signals'::regclass AND NOT tgisinternal ORDER BY tgname",
    )
  } finally {
    await db.close()
  }
}

/**
 * A copy of the stopped server's data dir with its signal triggers dropped and `tamper` applied:
 * the files, and on PostgreSQL its database too (the copy's, made from the original as a template).
 */
async function tampered(tamper: (db: TestDatabase) => Promise<unknown>): Promise<string> {
  const dir = await copyDataDir(dataDir, 'bulwark-chain')
  const db = await openTestDatabase(dir)
  try {
    for (const t of triggers) await db.exec(`DROP TRIGGER ${t.name}${db.engine === 'postgres' ? ' ON signals' : ''}`)
    await tamper(db)
  } finally {
    await db.close()
  }
  return dir
}

/** The export a server on `dir` gives acme, written to a file, as a subscriber would keep it. */
async function exportOf(dir: string): Promise<{ file: string; output: string }> {
  const copy = await startServer({ dataDir: dir, args: ['--quiet'] })
  try {
    const jwt = await login(copy, acme.ownerEmail, acme.password)
    const res = await client(copy)('GET', `/api/v1/signals/export?model_id=${MODEL}`, { token: jwt })
    assert.is(res.status, 200, res.text)
    const file = join(tempDir('export'), 'export.json')
    writeFileSync(file, res.text)
    return { file, output: copy.output() }
  } finally {
    await copy.stop()
  }
}

test.before(async () => {
  server = await startServer({ args: ['--quiet'] })
  dataDir = server.dataDir
  const api = client(server)
  acme = await tenantFixture(server, 'acme', 'EXECUTE')
  const zeta = await tenantFixture(server, 'zeta', 'SIGNAL')
  assert.is((await api('PUT', '/api/v1/workspace/models', { token: acme.jwt, body: { model_ids: [MODEL] } })).status, 200)
  assert.is((await api('PUT', '/api/v1/workspace/models', { token: zeta.jwt, body: { model_ids: ['mean-reversion'] } })).status, 200)
  await importSeries(dataDir, ALL_PAIRS, '2025-06-30')
  for (const date of RUNS) {
    const res = await cli(['publish', '--date', date, '--model', MODEL], { dataDir })
    assert.is(res.code, 0, res.stderr)
  }
  triggers = await triggersOf(dataDir)
  assert.equal(
    triggers.map((t) => t.name),
    // PostgreSQL also refuses TRUNCATE (signals_no_truncate), which row triggers do not see.
    ENGINE === 'postgres' ? ['signals_no_delete', 'signals_no_truncate', 'signals_no_update'] : ['signals_no_delete', 'signals_no_update'],
  )
})
test.after(async () => {
  await server.stop()
})

test("the export recomputes here, link by link; its head is the public one and the last event's", async () => {
  const api = client(server)
  const key = await acme.key(['signals:read'])
  const res = await api('GET', `/api/v1/signals/export?model_id=${MODEL}`, { token: key })
  assert.is(res.status, 200, res.text)
  exported = res.json
  const rows: any[] = exported.signals
  assert.is(rows.length, 15)
  let prev = GENESIS
  rows.forEach((s, i) => {
    assert.is(s.chain_seq, i + 1)
    assert.is(s.prev_hash, prev, `${s.id} links to the one before`)
    assert.is(s.hash, oracleHash(prev, s), `${s.id} recomputed`)
    prev = s.hash
  })
  assert.equal(exported.signal_chain, { count: 15, head_hash: prev, as_of: '2025-06-30' })

  const models = await api('GET', '/api/v1/public/models') // no credential
  assert.is(models.status, 200)
  assert.equal(
    models.json.map((m: any) => m.id),
    ['breakout-momentum', 'mean-reversion', 'trend-follower'],
  )
  const model = models.json.find((m: any) => m.id === MODEL)
  assert.equal(Object.keys(model), ['id', 'name', 'version', 'hash', 'signal_chain'])
  assert.ok(rows.every((s) => s.model_version === model.version && s.model_hash === model.hash))
  publicHead = model.signal_chain
  assert.equal(publicHead, exported.signal_chain)
  assert.equal(models.json.find((m: any) => m.id === 'mean-reversion').signal_chain, { count: 0, head_hash: GENESIS, as_of: null })

  // Each run's event carries the head after that run.
  const events = (
    await query(dataDir, `SELECT e.data FROM events e JOIN tenants t ON t.id = e.tenant_id WHERE t.slug = 'acme' AND e.type = 'signal.published' ORDER BY e.id`)
  ).map((e) => JSON.parse(e.data))
  assert.equal(
    events.map((e) => e.signal_chain),
    [5, 10, 15].map((n) => ({ count: n, head_hash: rows[n - 1].hash, as_of: rows[n - 1].as_of })),
  )
  assert.equal(events.at(-1).signal_chain, publicHead)

  const listed = await api('GET', `/api/v1/signals?model_id=${MODEL}`, { token: key })
  for (const s of listed.json) {
    const twin = rows.find((r) => r.id === s.id)
    assert.equal([s.prev_hash, s.hash], [twin.prev_hash, twin.hash])
  }
})

test('export: 401 without a credential, 403 without signals:read, 404 for a model not active here, 400 without model_id', async () => {
  const api = client(server)
  const path = `/api/v1/signals/export?model_id=${MODEL}`
  assert.is((await api('GET', path)).status, 401)
  const wrong = await api('GET', path, { token: await acme.key(['trades:read']) })
  assert.equal([wrong.status, wrong.json.code], [403, 'insufficient_scope'])
  const key = await acme.key(['signals:read'])
  for (const other of ['mean-reversion', 'breakout-momentum']) {
    const res = await api('GET', `/api/v1/signals/export?model_id=${other}`, { token: key })
    assert.equal([res.status, res.json.detail], [404, `model ${other} is not active in this workspace`])
  }
  const missing = await api('GET', '/api/v1/signals/export', { token: key })
  assert.equal(
    [missing.status, missing.json.code, missing.json.detail],
    [400, 'validation_failed', 'model_id: is required: the model whose signal chain to export'],
  )
  const off = await startServer({ args: ['--quiet', '--no-public-feed'] })
  try {
    assert.is((await client(off)('GET', '/api/v1/public/models')).status, 404)
  } finally {
    await off.stop()
  }
})

test('the triggers refuse UPDATE and DELETE', async () => {
  const db = await openTestDatabase(dataDir)
  try {
    const id = exported.signals[3].id
    const refused = async (sql: string) => {
      const error = await db.run(sql, [id]).then(
        () => undefined,
        (e: Error) => e,
      )
      assert.ok(error, `${sql}: accepted`)
      assert.match(error.message, /immutable/)
    }
    const hash = db.engine === 'postgres' ? "lpad('1', 64, '0')" : "printf('%064d', 1)"
    await refused('UPDATE signals SET entry_price = 1 WHERE id = ?')
    await refused(`UPDATE signals SET hash = ${hash} WHERE id = ?`)
    await refused('DELETE FROM signals WHERE id = ?')
  } finally {
    await db.close()
  }
})

test('signals verify: intact, one line per model, with the head found; usage errors exit 2', async () => {
  const res = await verify(dataDir, '--head', publicHead.head_hash)
  assert.is(res.code, 0, res.stdout + res.stderr)
  const last = exported.signals.at(-1)
  assert.equal(res.stdout.trim().split('\n'), [
    `breakout-momentum: intact, 0 signals, head ${GENESIS}`,
    `mean-reversion: intact, 0 signals, head ${GENESIS}`,
    `trend-follower: intact, 15 signals, head ${publicHead.head_hash} as of 2025-06-30, contains head ${publicHead.head_hash} (${last.id})`,
  ])
  const unknown = await verify(dataDir, '--model', 'nope')
  assert.equal([unknown.code, unknown.stderr], [1, 'error: no model nope; models: breakout-momentum, mean-reversion, trend-follower\n'])
  const notJson = join(tempDir('export'), 'x.json')
  writeFileSync(notJson, 'not json')
  const usages: [string[], RegExp][] = [
    [['--head', 'abc', '--data-dir', dataDir], /--head must be a signal chain head: 64 hex digits/],
    [['extra', '--data-dir', dataDir], /unexpected argument extra/],
    [['--model'], /--model needs a value/],
    [['--file', notJson], /--file \S+x\.json: not JSON/],
    [['--file', notJson, '--model', MODEL], /--file verifies an export offline: --model and --data-dir do not apply/],
  ]
  for (const [args, message] of usages) {
    const usage = await cli(['signals', 'verify', ...args])
    assert.is(usage.code, 2, `${args}: ${usage.stderr}`)
    assert.match(usage.stderr, new RegExp(`^error: ${message.source}.*\nusage: bulwark signals verify`))
  }
})

test('behind dropped triggers: an edited, a deleted and an inserted signal are named, locally and in the export', async () => {
  assert.is(await server.stop(), 0)
  const rows: any[] = exported.signals
  const victim = rows[6] // chain_seq 7
  const forged = { ...rows[6], id: 'sig_01ZZZZZZZZZZZZZZZZZZZZZZZZ', pair: 'FAKE/USDT', chain_seq: 7, prev_hash: rows[5].hash }
  forged.hash = oracleHash(forged.prev_hash, forged)
  const cases = [
    {
      problem: 'edited',
      named: victim.id,
      tamper: (db: TestDatabase) => db.run('UPDATE signals SET entry_price = entry_price * 2 WHERE id = ?', [victim.id]),
    },
    { problem: 'deleted', named: rows[7].id, tamper: (db: TestDatabase) => db.run('DELETE FROM signals WHERE id = ?', [victim.id]) },
    {
      problem: 'inserted',
      named: forged.id,
      tamper: async (db: TestDatabase) => {
        // Room at chain_seq 7, in two steps: the unique (model_id, chain_seq) is checked row by row.
        await db.run('UPDATE signals SET chain_seq = chain_seq + 1000 WHERE model_id = ? AND chain_seq >= 7', [MODEL])
        await db.run('UPDATE signals SET chain_seq = chain_seq - 999 WHERE model_id = ? AND chain_seq >= 1000', [MODEL])
        const columns = [
          'id',
          'model_id',
          'model_version',
          'model_hash',
          'pair',
          'action',
          'direction',
          'entry_price',
          'as_of',
          'created_at',
          'prev_hash',
          'hash',
        ]
        await db.run(
          `INSERT INTO signals (${columns.join(', ')}, chain_seq) VALUES (${columns.map(() => '?').join(', ')}, 7)`,
          columns.map((c) => forged[c]),
        )
      },
    },
  ]
  for (const c of cases) {
    const dir = await tampered(c.tamper)
    const local = await verify(dir, '--model', MODEL)
    assert.is(local.code, 1, `${c.problem}: ${local.stdout}`)
    assert.match(local.stdout, new RegExp(`^trend-follower: BROKEN, ${c.problem}: .*${c.named}`), c.problem)
    const { file, output } = await exportOf(dir)
    assert.match(output, /signal immutability triggers restored: signals_no_update missing, recreated/, 'serve puts them back, loudly')
    assert.equal(await triggersOf(dir), triggers)
    const offline = await cli(['signals', 'verify', '--file', file, '--head', publicHead.head_hash])
    assert.is(offline.code, 1, offline.stdout)
    assert.match(offline.stdout, new RegExp(`^trend-follower: BROKEN, ${c.problem}: .*${c.named}`), `${c.problem} in the export`)
  }
  const intact = await cli(['signals', 'verify', '--file', (await exportOf(dataDir)).file, '--head', publicHead.head_hash])
  assert.is(intact.code, 0, intact.stdout + intact.stderr)
})

test('a truncation after the head was taken passes a plain verify and fails --head, locally and offline', async () => {
  const rows: any[] = exported.signals
  const dir = await tampered((db) => db.run('DELETE FROM signals WHERE model_id = ? AND chain_seq > 10', [MODEL]))
  const plain = await verify(dir, '--model', MODEL)
  assert.is(plain.code, 0)
  assert.match(plain.stdout, new RegExp(`^trend-follower: intact, 10 signals, head ${rows[9].hash}`))
  const headed = await verify(dir, '--model', MODEL, '--head', publicHead.head_hash)
  assert.is(headed.code, 1)
  assert.match(headed.stderr, /not found in the chain of trend-follower: truncated or rewritten after that head was taken/)
  const offline = await cli(['signals', 'verify', '--file', (await exportOf(dir)).file, '--head', publicHead.head_hash.toUpperCase()])
  assert.is(offline.code, 1)
  assert.match(offline.stderr, /not found in the export: truncated/)
})

test('signals written before the chain are back-filled in (as_of, id) order, to the same hashes', async () => {
  const dir = await tampered((db) =>
    db.exec('DELETE FROM signal_chain_backfill; UPDATE signals SET model_version = NULL, model_hash = NULL, chain_seq = NULL, prev_hash = NULL, hash = NULL'),
  )
  const res = await verify(dir, '--model', MODEL)
  assert.is(res.code, 0, res.stdout + res.stderr)
  assert.match(res.stdout, /"msg":"signal chain back-filled","signals":15/)
  assert.match(res.stdout, new RegExp(`^trend-follower: intact, 15 signals, head ${publicHead.head_hash} as of 2025-06-30$`, 'm'))
  assert.equal(
    await query(dir, 'SELECT id, hash FROM signals WHERE model_id = ? ORDER BY chain_seq', MODEL),
    exported.signals.map((s: any) => ({ id: s.id, hash: s.hash })),
  )
})

test('a signal inserted later without a link is never chained: verify names it, a restart leaves it', async () => {
  const dir = await tampered((db) =>
    db.run(
      "INSERT INTO signals (id, model_id, pair, action, direction, entry_price, as_of, created_at) VALUES ('sig_01KZZZZZZZZZZZZZZZZZZZZZZZ', ?, 'FAKE/USDT', 'HOLD', 'HOLD', 1, '2025-06-30', '2025-07-01T00:00:00.000Z')",
      [MODEL],
    ),
  )
  for (let run = 0; run < 2; run++) {
    const res = await verify(dir, '--model', MODEL)
    assert.is(res.code, 1, res.stdout)
    assert.match(res.stdout, /^trend-follower: BROKEN, unchained: .*sig_01KZZZZZZZZZZZZZZZZZZZZZZZ/)
    assert.not.match(res.stdout, /back-filled/)
  }
})

test.run()
