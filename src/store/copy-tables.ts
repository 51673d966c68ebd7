// The rows of `bulwark store copy` (./copy.ts): every table of the SQLite snapshot into the
// PostgreSQL transaction, checked against PostgreSQL's schema, in foreign-key order, in multi-row
// INSERTs of bounded size, with the derived tables' triggers off while they go in.
import type pg from 'pg'
import { CopyRefused, type CopyOptions, type TableCopy } from './copy.ts'
import type { DB } from './db.ts'

/**
 * Tables the migrations themselves fill (sql/001's built-in models): present in every freshly
 * migrated database, so they do not make it non-empty; the data dir's rows replace them.
 */
const MIGRATION_ROWS = new Set(['models'])

/** PostgreSQL's limit of parameters in one statement is 65535; a batch also stays this many rows or fewer. */
const MAX_PARAMETERS = 60_000
const BATCH_ROWS = 1000

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`

/** Tables in an order where each comes after the tables its foreign keys name (ties by name). */
function dependencyOrder(tables: string[], dependsOn: Map<string, Set<string>>): string[] {
  const order: string[] = []
  const done = new Set<string>()
  const visiting = new Set<string>()
  const visit = (table: string, path: string[]) => {
    if (done.has(table)) return
    if (visiting.has(table)) throw new CopyRefused(`the foreign keys form a cycle (${[...path, table].join(' -> ')}): no insert order satisfies them`)
    visiting.add(table)
    for (const parent of [...(dependsOn.get(table) ?? [])].sort()) if (parent !== table) visit(parent, [...path, table])
    visiting.delete(table)
    done.add(table)
    order.push(table)
  }
  for (const table of [...tables].sort()) visit(table, [])
  return order
}

/** A value as PostgreSQL takes it: SQLite's integers are read exactly (bigint) and sent as text when beyond 2^53. */
function pgValue(value: unknown): unknown {
  if (typeof value === 'bigint') return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString()
  return value
}

/** Every table, in the transactions the caller holds on both sides; returns the rows per table. */
export async function copyTables(sqlite: DB, client: pg.Client, options: CopyOptions): Promise<TableCopy[]> {
  const sourceTables = (
    sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'").all() as { name: string }[]
  ).map((t) => t.name)
  const targetTables = new Set(
    (
      await client.query<{ name: string }>(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations'",
      )
    ).rows.map((t) => t.name),
  )
  const missing = sourceTables.filter((t) => !targetTables.has(t))
  if (missing.length) throw new CopyRefused(`the PostgreSQL database has no table ${missing.join(', ')}: its schema is not this bulwark's`)
  const extra = [...targetTables].filter((t) => !sourceTables.includes(t))
  if (extra.length) throw new CopyRefused(`the data dir's database has no table ${extra.join(', ')}: its schema is not this bulwark's`)

  // Writers (a node started on the target meanwhile) wait for the copy; readers do not.
  await client.query(`LOCK TABLE ${sourceTables.map(ident).join(', ')} IN EXCLUSIVE MODE`)
  const withRows: string[] = []
  for (const table of sourceTables) {
    if (MIGRATION_ROWS.has(table)) continue
    const { rows } = await client.query<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${ident(table)}) AS any`)
    if (rows[0].any) withRows.push(table)
  }
  if (withRows.length) {
    throw new CopyRefused(
      `the PostgreSQL database is not empty (rows in ${withRows.slice(0, 5).join(', ')}${withRows.length > 5 ? `, and ${withRows.length - 5} more tables` : ''}): copy into a new, empty database`,
    )
  }

  // Columns: SQLite's stored ones (table_xinfo's hidden 2 and 3 are generated), which PostgreSQL must have as ordinary ones.
  const generatedHere = new Set(
    (
      await client.query<{ t: string; c: string }>(
        "SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = 'public' AND is_generated = 'ALWAYS'",
      )
    ).rows.map((r) => `${r.t}.${r.c}`),
  )
  const targetColumns = new Set(
    (
      await client.query<{ t: string; c: string }>("SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = 'public'")
    ).rows.map((r) => `${r.t}.${r.c}`),
  )
  const identities = (
    await client.query<{ t: string; c: string }>(
      "SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = 'public' AND is_identity = 'YES'",
    )
  ).rows
  const columnsOf = new Map<string, string[]>()
  const dependsOn = new Map<string, Set<string>>()
  for (const table of sourceTables) {
    const columns = (sqlite.prepare('SELECT name, hidden FROM pragma_table_xinfo(?) ORDER BY cid').all(table) as { name: string; hidden: number }[])
      .filter((c) => c.hidden === 0)
      .map((c) => c.name)
    for (const column of columns) {
      if (!targetColumns.has(`${table}.${column}`))
        throw new CopyRefused(`the PostgreSQL database has no column ${table}.${column}: its schema is not this bulwark's`)
      if (generatedHere.has(`${table}.${column}`))
        throw new CopyRefused(`${table}.${column} is generated in PostgreSQL but stored in SQLite: the schemas differ`)
    }
    columnsOf.set(table, columns)
    const parents = sqlite.prepare('SELECT DISTINCT "table" AS parent FROM pragma_foreign_key_list(?)').all(table) as { parent: string }[]
    dependsOn.set(table, new Set(parents.map((p) => p.parent)))
  }

  // The triggers that would count the copied rows again (see the top of this file).
  const triggered = (
    await client.query<{ t: string }>(
      "SELECT DISTINCT c.relname AS t FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND NOT g.tgisinternal",
    )
  ).rows.map((r) => r.t)
  for (const table of triggered) await client.query(`ALTER TABLE ${ident(table)} DISABLE TRIGGER USER`)

  const copied: TableCopy[] = []
  for (const table of dependencyOrder(sourceTables, dependsOn)) {
    const columns = columnsOf.get(table)!
    if (MIGRATION_ROWS.has(table)) await client.query(`DELETE FROM ${ident(table)}`)
    const hasIdentity = identities.some((i) => i.t === table)
    const perBatch = Math.max(1, Math.min(options.batchRows ?? BATCH_ROWS, Math.floor(MAX_PARAMETERS / columns.length)))
    const head = `INSERT INTO ${ident(table)} (${columns.map(ident).join(', ')})${hasIdentity ? ' OVERRIDING SYSTEM VALUE' : ''} VALUES `
    const insert = async (batch: unknown[][]) => {
      const values: unknown[] = []
      const tuples = batch.map((row) => `(${row.map((v) => `$${values.push(pgValue(v))}`).join(', ')})`)
      await client.query(head + tuples.join(', '), values)
    }
    const select = sqlite
      .prepare(`SELECT ${columns.map(ident).join(', ')} FROM ${ident(table)}`)
      .raw(true)
      .safeIntegers(true)
    let rows = 0
    let batch: unknown[][] = []
    for (const row of select.iterate() as IterableIterator<unknown[]>) {
      batch.push(row)
      if (batch.length >= perBatch) {
        await insert(batch)
        rows += batch.length
        batch = []
      }
    }
    if (batch.length) {
      await insert(batch)
      rows += batch.length
    }
    const { rows: counted } = await client.query<{ n: number }>(`SELECT count(*) AS n FROM ${ident(table)}`)
    if (counted[0].n !== rows) throw new Error(`${table}: ${rows} rows copied, but PostgreSQL counts ${counted[0].n}`)
    const done = { table, rows }
    copied.push(done)
    options.progress?.(done)
  }

  for (const { t, c } of identities) {
    await client.query(`SELECT setval(pg_get_serial_sequence($1, $2), coalesce(max(${ident(c)}), 1), max(${ident(c)}) IS NOT NULL) FROM ${ident(t)}`, [
      ident(t),
      c,
    ])
  }
  for (const table of triggered) await client.query(`ALTER TABLE ${ident(table)} ENABLE TRIGGER USER`)
  return copied
}
