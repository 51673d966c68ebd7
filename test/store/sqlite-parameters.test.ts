// SQLite's statements take their parameters as `(+@name)` (src/store/sqlite/queries.ts), so that a
// statement is not re-prepared on every call: the rewrite leaves strings, identifiers and comments
// alone, and the rows a query gives are the same whatever the bindings, call after call (a join,
// an index beside a filter, a LIMIT, a LIKE, a partial index).
// engines: sqlite
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { openStore } from '../../src/store/open-store.ts'
import { unplannedParameters } from '../../src/store/sqlite/queries.ts'
import { query, type Store } from '../../src/store/store.ts'
import { tempDir } from '../support/harness.ts'

const test = suite('store: SQLite parameters hidden from the planner')
let store: Store

const create = [
  query('CREATE TABLE p_parents (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, state TEXT NOT NULL) STRICT'),
  query("CREATE INDEX p_parents_open ON p_parents(tenant) WHERE state <> 'DONE'"),
  query('CREATE TABLE p_children (parent_id TEXT NOT NULL REFERENCES p_parents(id), n INTEGER NOT NULL, label TEXT NOT NULL) STRICT'),
  query('CREATE INDEX p_children_parent ON p_children(parent_id)'),
]
const addParent = query<[string, string, string]>('INSERT INTO p_parents (id, tenant, state) VALUES (?, ?, ?)')
const addChild = query<{ parent: string; n: number; label: string }>('INSERT INTO p_children (parent_id, n, label) VALUES (@parent, @n, @label)')
const joined = query<{ tenant: string; state: string; limit: number }, { id: string; total: number }>(`
  SELECT p.id, sum(c.n) AS total FROM p_parents p JOIN p_children c ON c.parent_id = p.id
  WHERE p.tenant = @tenant AND p.state = @state GROUP BY p.id ORDER BY p.id LIMIT @limit`)
const liked = query<[string], { label: string }>('SELECT label FROM p_children WHERE label LIKE ? ORDER BY label')
const working = query<{ tenant: string }, { id: string }>("SELECT id FROM p_parents WHERE tenant = @tenant AND state <> 'DONE' ORDER BY id")

test.before(async () => {
  store = await openStore({ dataDir: tempDir('bulwark-params') })
  await store.write(async (tx) => {
    for (const q of create) await tx.run(q)
    for (let i = 0; i < 30; i++) {
      const id = `p${String(i).padStart(2, '0')}`
      await tx.run(addParent, [id, i % 3 === 0 ? 'a' : 'b', i % 2 === 0 ? 'DONE' : 'OPEN'])
      for (let n = 0; n <= i % 4; n++) await tx.run(addChild, { parent: id, n: n + 1, label: `${id}-${n}` })
    }
  })
})
test.after(() => store.close())

test('the text: every parameter wrapped, strings, identifiers and comments untouched', () => {
  assert.is(
    unplannedParameters(`SELECT '@a?', "@b", x FROM t -- @c ?\n WHERE a = @a AND b IN (?, ?) AND c = 'it''s ?' /* @d */ LIMIT @limit`),
    `SELECT '@a?', "@b", x FROM t -- @c ?\n WHERE a = (+@a) AND b IN ((+?), (+?)) AND c = 'it''s ?' /* @d */ LIMIT (+@limit)`,
  )
  assert.is(unplannedParameters("SELECT json_extract(@doc, '$.a'), mail@host FROM t"), "SELECT json_extract((+@doc), '$.a'), mail@host FROM t")
})

test('a join, a LIMIT, a LIKE and a partial index give the same rows, whatever the bindings, call after call', async () => {
  // The oracle: the same rows computed here from what was inserted.
  const expected = (tenant: string, state: string, limit: number) => {
    const rows: { id: string; total: number }[] = []
    for (let i = 0; i < 30; i++) {
      if ((i % 3 === 0 ? 'a' : 'b') !== tenant || (i % 2 === 0 ? 'DONE' : 'OPEN') !== state) continue
      let total = 0
      for (let n = 0; n <= i % 4; n++) total += n + 1
      rows.push({ id: `p${String(i).padStart(2, '0')}`, total })
    }
    return rows.slice(0, limit)
  }
  for (let round = 0; round < 3; round++) {
    for (const [tenant, state, limit] of [
      ['a', 'OPEN', 2],
      ['b', 'DONE', 100],
      ['a', 'DONE', 0],
      ['b', 'OPEN', 1],
    ] as const) {
      assert.equal(await store.read.all(joined, { tenant, state, limit }), expected(tenant, state, limit), `${tenant} ${state} ${limit}`)
    }
    assert.equal(
      (await store.read.all(liked, ['p1%-2'])).map((r) => r.label),
      ['p10-2', 'p11-2', 'p14-2', 'p15-2', 'p18-2', 'p19-2'],
    )
    assert.equal(
      (await store.read.all(liked, ['p0_-3'])).map((r) => r.label),
      ['p03-3', 'p07-3'],
    )
    assert.equal(
      (await store.read.all(working, { tenant: 'a' })).map((r) => r.id),
      ['p03', 'p09', 'p15', 'p21', 'p27'],
    )
    assert.equal((await store.read.all(working, { tenant: 'z' })).length, 0)
  }
})

test.run()
