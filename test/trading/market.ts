// Test helpers shared by the trading and risk tests: candles through the real `prices import`, a
// read-only look at the database file, and a client that checks every answer against the OpenAPI
// document the server serves.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as assert from 'uvu/assert'
import { openTestDatabase, type TestDatabase } from '../support/database.ts'
import { cli, client, ENGINE, tempDir, type Server } from '../support/harness.ts'
import { ResponseOracle } from '../support/openapi.ts'

/** [pair, date, close]: open, high and low are derived around the close. */
export type Close = [string, string, number]

export function candlesCsv(closes: Close[]): string {
  const lines = closes.map(([pair, date, close]) => `${pair},${date},${close},${close * 1.01},${close * 0.99},${close},1000`)
  return `${['pair,date,open,high,low,close,volume', ...lines].join('\n')}\n`
}

export async function importCloses(server: Server, closes: Close[]): Promise<void> {
  const file = join(tempDir('candles'), 'candles.csv')
  writeFileSync(file, candlesCsv(closes))
  const res = await cli(['prices', 'import', file], { dataDir: server.dataDir })
  assert.is(res.code, 0, res.stderr)
}

/** Reads the server's database directly (on either engine), as an auditor would. */
export async function withDb<T>(server: Pick<Server, 'dataDir'>, fn: (db: TestDatabase) => Promise<T> | T, readonly = true): Promise<T> {
  const db = await openTestDatabase(server.dataDir, { readonly })
  try {
    return await fn(db)
  } finally {
    await db.close()
  }
}

export async function eventsOf(server: Server, type: string): Promise<any[]> {
  const rows = await withDb(server, (db) => db.all<{ data: string }>('SELECT data FROM events WHERE type = ? ORDER BY id', [type]))
  return rows.map((r) => JSON.parse(r.data))
}

/** A client whose every answer must match the served OpenAPI document. */
export async function checkedClient(server: Server) {
  const api = client(server)
  return new ResponseOracle((await api('GET', '/api/v1/openapi.json')).json).checked(api)
}

export function near(actual: number, expected: number, what = 'value'): void {
  assert.ok(Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected)), `${what}: ${actual} != ${expected}`)
}

/** Waits until the kill switch's cancellations are settled into the order rows and their events. */
/**
 * Waits until every kill switch's cancellations are settled into rows and events: 10 s on SQLite;
 * on PostgreSQL, where each row is a round trip, 60 s (settlement is not a figure of the SPEC's).
 */
export async function settled(server: Server): Promise<void> {
  const ms = ENGINE === 'postgres' ? 60_000 : 10_000
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const open = await withDb(server, async (db) => (await db.get<{ n: number }>('SELECT count(*) AS n FROM order_cancellations WHERE settled_at IS NULL'))!.n)
    if (open === 0) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`order cancellations were not settled within ${ms / 1000} s`)
}
