// Answers of pure reads (a function of the tenant, the query string and the database content only),
// kept as ready-to-send bytes while the database is unchanged. Any write, by this process or another,
// changes dataVersion() and so empties the cache: an answer is never staler than the database.
// Credentials are still checked on every request; only the answer is reused.
import { dataVersion } from '../store/db.ts'
import { Raw } from './route.ts'

const MAX_ENTRIES = 64
const MAX_BODY_BYTES = 128 * 1024 // at most 8 MiB held: a few pages per tenant and query

export class ReadCache {
  private version = ''
  private entries = new Map<string, Raw>()

  /** The cached answer for key, or the one `build` makes (cached when small enough). */
  answer(key: string, build: () => { body: unknown; headers?: Record<string, string> }): Raw {
    const version = dataVersion()
    if (version !== this.version) {
      this.entries.clear()
      this.version = version
    }
    const hit = this.entries.get(key)
    if (hit) return hit
    const { body, headers } = build()
    const raw = new Raw(200, 'application/json; charset=utf-8', Buffer.from(JSON.stringify(body)), { ...headers })
    if (raw.body.length <= MAX_BODY_BYTES) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!)
      this.entries.set(key, raw)
    }
    return raw
  }
}
