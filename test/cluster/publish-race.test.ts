// engines: own
// Concurrent `bulwark publish` commands of one model and date on one PostgreSQL database (SPEC 15):
// each exits 0, the date's signals are written once, and the model's chain is one chain. The first
// round is made to collide for certain: the test holds the model's row (the lock of its chain) until
// every command waits on it; the second round, completing a date a pair was missing from, runs free.
import { createHash } from 'node:crypto'
import pg from 'pg'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { MIGRATION_LOCK_SPACE } from '../../src/store/postgres/migrate.ts'
import { numberTypes } from '../../src/store/postgres/types.ts'
import { cli, type CliResult, tempDir } from '../support/harness.ts'
import { sharedPostgres } from '../support/postgres.ts'
import { ALL_PAIRS, EXPECTED, eventually, importSeries } from '../signals/fixtures.ts'

const test = suite('cluster: concurrent publishes of one model and date')
const MODEL = 'trend-follower'
const DATE = '2025-07-01'
const AS_OF = '2025-06-30'
const LATE_PAIR = 'XRP/USDT' // a pair of MODEL whose candles arrive after the first round
const COMMANDS = 5
const GENESIS = '0'.repeat(64)
let databaseUrl: string
let db: pg.Client
let watcher: pg.Client
let importDir: string

/** RFC 8785 for a signal's flat fields, and the chain link's hash (SPEC 11), written again here. */
const canonical = (o: Record<string, unknown>) =>
  `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${JSON.stringify(o[k])}`)
    .join(',')}}`
const COVERED = ['id', 'model_id', 'model_version', 'model_hash', 'pair', 'action', 'entry_price', 'as_of', 'created_at']
const linkHash = (prev: string, row: Record<string, unknown>) =>
  createHash('sha256')
    .update(`${prev}\n${canonical(Object.fromEntries(COVERED.map((f) => [f, row[f]])))}`)
    .digest('hex')

/** Each command as a node of its own would run it: its own data dir, the one database. */
const publishes = () => Array.from({ length: COMMANDS }, () => cli(['publish', '--date', DATE, '--model', MODEL], { dataDir: tempDir('bulwark-node') }))

const every = (results: CliResult[], code: number) => {
  for (const r of results) assert.is(r.code, code, r.stdout + r.stderr)
}

test.before(async () => {
  process.env.BULWARK_DATABASE_URL = databaseUrl = await (await sharedPostgres()).createDatabase()
  process.env.BULWARK_SECRETS_DIR = tempDir('bulwark-secrets')
  importDir = tempDir('bulwark-import')
  await importSeries(
    importDir,
    ALL_PAIRS.filter((p) => p !== LATE_PAIR),
    AS_OF,
  )
  db = new pg.Client({ connectionString: databaseUrl, types: numberTypes })
  watcher = new pg.Client({ connectionString: databaseUrl })
  await Promise.all([db.connect(), watcher.connect()])
})
test.after(async () => {
  await Promise.all([db?.end(), watcher?.end()])
})

test('gated on the chain lock: every command exits 0, and the run is written by one of them', async () => {
  // The commands start in seconds on a small machine, longer than a statement may wait on a row
  // (4 s): they are held first where waiting has no limit, the migrations' lock, then let go at once
  // onto the chain's lock, which this session takes in between, and let go again once all wait there.
  await db.query('SELECT pg_advisory_lock($1, 0)', [MIGRATION_LOCK_SPACE])
  const running = publishes()
  try {
    await waitingOn('pg_advisory_lock', 20_000)
    await db.query('BEGIN')
    await db.query('SELECT 1 FROM models WHERE id = $1 FOR UPDATE', [MODEL])
    await db.query('SELECT pg_advisory_unlock($1, 0)', [MIGRATION_LOCK_SPACE])
    await waitingOn('FOR UPDATE', 3000)
  } finally {
    await db.query('ROLLBACK')
    await db.query('SELECT pg_advisory_unlock_all()')
  }
  const results = await Promise.all(running)
  every(results, 0)
  const wrote = results.filter((r) => /: 4 signals written/.test(r.stdout))
  assert.is(wrote.length, 1, results.map((r) => r.stdout).join(''))
  for (const r of results.filter((x) => x !== wrote[0])) {
    assert.match(r.stdout, /: 0 signals written .*1 pair still without prices/)
  }
  await assertWrittenOnce(4)
})

test('free-running, completing the date: every command exits 0, one writes the missing pair, the rest find it published', async () => {
  await importSeries(importDir, [LATE_PAIR], AS_OF)
  const results = await Promise.all(publishes())
  every(results, 0)
  const wrote = results.filter((r) => /: 1 signal written/.test(r.stdout))
  assert.is(wrote.length, 1, results.map((r) => r.stdout).join(''))
  for (const r of results.filter((x) => x !== wrote[0])) assert.match(r.stdout, /already published, nothing to do/)
  await assertWrittenOnce(5)
  const run = (await db.query('SELECT signals, missing_pairs FROM publish_runs WHERE model_id = $1 AND date = $2', [MODEL, DATE])).rows
  assert.equal(run, [{ signals: 5, missing_pairs: 0 }])
})

/** Until every command's session waits for a lock in a statement that contains `statement`. */
async function waitingOn(statement: string, ms: number): Promise<void> {
  const waiting = `SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock' AND position($1 in query) > 0`
  // Not on `db`, whose transaction would see one snapshot of pg_stat_activity throughout.
  await eventually(
    async () => ((await watcher.query(waiting, [statement])).rows[0].n === COMMANDS ? true : undefined),
    `${COMMANDS} commands waiting on ${statement}`,
    ms,
  )
}

/** The date's signals, one per pair with the rule's answer, and the model's chain: 1..n, each link on the one before. */
async function assertWrittenOnce(count: number): Promise<void> {
  const rows = (
    await db.query(
      `SELECT id, model_id, model_version, model_hash, pair, action, entry_price, as_of, created_at, chain_seq, prev_hash, hash
       FROM signals WHERE model_id = $1 ORDER BY chain_seq`,
      [MODEL],
    )
  ).rows
  assert.is(rows.length, count)
  assert.is(new Set(rows.map((r) => r.pair)).size, count, 'a pair written twice')
  for (const row of rows) {
    assert.is(row.as_of, AS_OF)
    assert.is(row.action, EXPECTED[MODEL][row.pair], row.pair)
  }
  let prev = GENESIS
  rows.forEach((row, i) => {
    assert.is(row.chain_seq, i + 1)
    assert.is(row.prev_hash, prev)
    assert.is(row.hash, linkHash(prev, row))
    prev = row.hash
  })
  const verified = await cli(['signals', 'verify', '--model', MODEL], { dataDir: importDir })
  assert.is(verified.code, 0, verified.stderr)
  assert.match(verified.stdout, new RegExp(`^${MODEL}: intact, ${count} signals, head ${prev} as of ${AS_OF}`))
}

test.run()
