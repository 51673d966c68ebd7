// STUB: the alert-receiver helper replaces this file (POST /hooks/alerts/{id}, SPEC 16).
import type { BlockList } from 'node:net'
import type { Mount } from '../http/server.ts'
import type { SecretBox } from '../store/secret-box.ts'
import type { Store } from '../store/store.ts'
import type { VenueQuotes } from '../trading/live/quotes.ts'

export const ALERTS_PREFIX = '/hooks/alerts'

export interface AlertReceiverDeps {
  store: Store
  secrets: () => SecretBox
  /** LIVE alerts are priced at the venue before their transaction, as POST /api/v1/orders does. */
  quotes: VenueQuotes
  /** Proxies whose X-Forwarded-For is believed (--trusted-proxy): the sender's address for source_cidrs. */
  trustedProxies?: BlockList
}

/** The receiver as the HTTP server mounts it. */
export function alertReceiver(_deps: AlertReceiverDeps): Mount {
  return {
    prefix: ALERTS_PREFIX,
    handle: async () => ({ reply: { status: 404, headers: {}, body: '' }, route: ALERTS_PREFIX }),
  }
}
