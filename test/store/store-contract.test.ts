// The Store's contract (src/store/store.ts), the same cases on both engines: SQLite in a temp data
// dir, PostgreSQL in a fresh database of the test server (test/support/postgres.ts). A write commits
// all or nothing, a savepoint's refusal keeps the rest, reads see only what committed, concurrent
// read-then-write changes lose nothing, and the named parameters mean the same on both.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { openStore } from '../../src/store/open-store.ts'
import { toPositional } from '../../src/store/postgres/named-params.ts'
import { type Store, query } from '../../src/store/store.ts'
import { tempDir } from '../support/harness.ts'
import { sharedPostgres } from '../support/postgres.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
/** The error a promise rejects with (fails when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    () => undefined,
    (e: Error) => e,
  )
  assert.ok(outcome, 'expected a rejection')
  return outcome!
}

/** A promise and the function that settles it: a write's work waits on it while the test looks. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { opened, open }
}

const createCounters = query('CREATE TABLE IF NOT EXISTS contract_counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)')
const insert = query<{ name: string; value: number }>('INSERT INTO contract_counters (name, value) VALUES (@name, @value)')
const counterValue = query<{ name: string }, { value: number }>('SELECT value FROM contract_counters WHERE name = @name')
const names = query<object, { name: string }>('SELECT name FROM contract_counters ORDER BY name')
const setValue = query<{ name: string; value: number }>('UPDATE contract_counters SET value = @value WHERE name = @name')
// SQLite has no FOR UPDATE (its writes are serialised); PostgreSQL locks the row it will write.
const valueForUpdate = query<{ name: string }, { value: number }>({
  sqlite: 'SELECT value FROM contract_counters WHERE name = @name',
  postgres: 'SELECT value FROM contract_counters WHERE name = @name FOR UPDATE',
})
// A name used three times, and '@name' inside a string literal and a comment, which stay as they are.
const named = query<{ name: string; min: number }, { name: string; literal: string; value: number }>(
  "SELECT name, '@name' AS literal, value FROM contract_counters -- @ignored\n WHERE name = @name AND value >= @min AND name = @name AND @name <> 'x@y'",
)

const engines: Record<string, () => Promise<Store>> = {
  sqlite: () => openStore({ dataDir: tempDir('bulwark-store') }),
  postgres: async () => openStore({ dataDir: tempDir('bulwark-store'), databaseUrl: await (await sharedPostgres()).createDatabase() }),
}

for (const [engine, open] of Object.entries(engines)) {
  const test = suite(`store contract: ${engine}`)
  let store: Store
  const value = async (name: string) => (await store.read.get(counterValue, { name }))?.value

  test.before(async () => {
    store = await open()
    await store.write(async (tx) => {
      await tx.run(createCounters)
    })
  })
  test.after(async () => {
    await store.close()
  })

  test('the engine is the one asked for', () => {
    assert.is(store.engine, engine)
  })

  test('a write commits all its statements, or none when its work throws midway', async () => {
    const result = await store.write(async (tx) => {
      await tx.run(insert, { name: 'a1', value: 1 })
      await tx.run(insert, { name: 'a2', value: 2 })
      return 'done'
    })
    assert.is(result, 'done')
    const refusal = new Error('refused midway')
    const error = await store
      .write(async (tx) => {
        await tx.run(insert, { name: 'b1', value: 1 })
        await sleep(5)
        assert.is((await tx.get(counterValue, { name: 'b1' }))?.value, 1) // the transaction sees its own write
        throw refusal
      })
      .catch((e) => e)
    assert.is(error, refusal, 'the error is rethrown as it was')
    assert.is(await value('b1'), undefined)
    assert.equal(
      (await store.read.all(names)).map((r) => r.name),
      ['a1', 'a2'],
    )
  })

  test("a savepoint's refusal undoes its own writes and keeps the transaction's; savepoints nest", async () => {
    await store.write(async (tx) => {
      await tx.run(insert, { name: 's-outer', value: 1 })
      const caught = await tx
        .savepoint(async () => {
          await tx.run(insert, { name: 's-inner', value: 1 })
          await tx.savepoint(async () => {
            await tx.run(insert, { name: 's-nested', value: 1 })
          })
          throw new Error('inner refused')
        })
        .catch((e: Error) => e.message)
      assert.is(caught, 'inner refused')
      const kept = await tx.savepoint(async () => {
        await tx.run(insert, { name: 's-kept', value: 1 })
        return 'kept'
      })
      assert.is(kept, 'kept')
    })
    assert.is(await value('s-outer'), 1)
    assert.is(await value('s-inner'), undefined)
    assert.is(await value('s-nested'), undefined)
    assert.is(await value('s-kept'), 1)
  })

  test('read sees only what committed, never a write whose work still awaits', async () => {
    const hold = gate()
    const written = gate()
    const pending = store.write(async (tx) => {
      await tx.run(insert, { name: 'r1', value: 7 })
      written.open()
      await hold.opened
    })
    await written.opened
    assert.is(await value('r1'), undefined, 'not yet committed')
    hold.open()
    await pending
    assert.is(await value('r1'), 7)
  })

  test('two concurrent read-then-write changes with awaits inside both count: +2, nothing lost', async () => {
    await store.write((tx) => tx.run(insert, { name: 'c', value: 0 }))
    const increment = () =>
      store.write(async (tx) => {
        const current = (await tx.get(valueForUpdate, { name: 'c' }))!.value
        await sleep(30)
        await tx.run(setValue, { name: 'c', value: current + 1 })
      })
    await Promise.all([increment(), increment()])
    assert.is(await value('c'), 2)
  })

  test('named parameters: a name used again is one value; @ in strings and comments stays', async () => {
    await store.write((tx) => tx.run(insert, { name: 'n@1', value: 5 }))
    assert.equal(await store.read.get(named, { name: 'n@1', min: 5 }), { name: 'n@1', literal: '@name', value: 5 })
    assert.is(await store.read.get(named, { name: 'n@1', min: 6 }), undefined)
    assert.match((await rejection(store.read.get(named, { name: 'n@1' } as never))).message, /min/, 'a missing parameter is refused')
  })

  test('a Tx used after its write ended refuses', async () => {
    let kept: Parameters<Parameters<Store['write']>[0]>[0] | undefined
    await store.write(async (tx) => {
      kept = tx
    })
    assert.match((await rejection(kept!.get(counterValue, { name: 'a1' }))).message, /transaction has ended/)
  })

  if (engine === 'sqlite') {
    test('SQLite: writes run one at a time in order, urgent ones ahead of those waiting', async () => {
      const order: string[] = []
      const hold = gate()
      const first = store.write(async () => {
        order.push('first')
        await hold.opened
      })
      const later = ['b', 'c'].map((name) => store.write(async () => void order.push(name)))
      const urgent = store.write(async () => void order.push('urgent'), { urgent: true })
      await sleep(10)
      assert.equal(order, ['first'], 'nothing runs beside a write in progress')
      hold.open()
      await Promise.all([first, urgent, ...later])
      assert.equal(order, ['first', 'urgent', 'b', 'c'])
    })
  }

  test.run()
}

const unit = suite('store: @name to $n for PostgreSQL')
unit('names numbered by first use; strings, identifiers, comments and dollar quotes untouched', () => {
  assert.equal(toPositional('SELECT @a, @b, @a'), { text: 'SELECT $1, $2, $1', names: ['a', 'b'] })
  assert.equal(toPositional(`SELECT '@a', 'it''s @b', E'\\'@c', "@d", @e -- @f\n/* @g /* @h */ */ $$@i$$ $t$@j$t$`), {
    text: `SELECT '@a', 'it''s @b', E'\\'@c', "@d", $1 -- @f\n/* @g /* @h */ */ $$@i$$ $t$@j$t$`,
    names: ['e'],
  })
  assert.equal(toPositional("SELECT a@>b, x <@ y, @ -1, mail@host, @_x1 FROM t WHERE v='x@y'").names, ['_x1'])
})
unit.run()
