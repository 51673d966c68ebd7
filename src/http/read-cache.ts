// Answers of pure reads (a function of the tenant, the query string and the database content only),
// kept as ready-to-send bytes while the database is unchanged. Any write, by this process or another,
// changes store.version() and so empties the cache: an answer is never staler than the database. An
// engine that cannot tell (version() undefined: PostgreSQL) builds every answer afresh.
// Credentials are still checked on every request; only the answer is reused.
import type { Store } from '../store/store.ts'
import { Raw } from './route.ts'

const MAX_ENTRIES = 64
const MAX_BODY_BYTES = 128 * 1024 // at most 8 MiB held: a few pages per tenant and query

export class ReadCache {
  private version: string | undefined
  private entries = new Map<string, Raw>()

  /**
   * The cached answer for key, or the one `build` makes (cached when small enough, and only when
   * nothing committed while it was built). `store`: the one the pipeline has (ctx.store).
   *
   * @example
   * return cache.answer(ctx.store, key, async () => ({ body: await forwardPerformance(ctx.db, id, from, to) }))
   */
  async answer(
    store: Store,
    key: string,
    build: () => Promise<{ body: unknown; headers?: Record<string, string> }> | { body: unknown; headers?: Record<string, string> },
  ): Promise<Raw> {
    const version = store.version()
    if (version === undefined || version !== this.version) {
      this.entries.clear()
      this.version = version
    }
    const hit = this.entries.get(key)
    if (hit) return hit
    const { body, headers } = await build()
    const raw = new Raw(200, 'application/json; charset=utf-8', Buffer.from(JSON.stringify(body)), { ...headers })
    const unchanged = version !== undefined && version === this.version && store.version() === version
    if (unchanged && raw.body.length <= MAX_BODY_BYTES) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!)
      this.entries.set(key, raw)
    }
    return raw
  }
}
