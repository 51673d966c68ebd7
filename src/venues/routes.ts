// The tenant's venue account over the API (SPEC 10). PUT reaches the venue before anything is
// stored, so it runs outside the pipeline's transaction and opens its own once the venue said yes.
import type { VenueSettings } from '../config.ts'
import { defineRoute, type RouteSpec } from '../http/route.ts'
import { validationError } from '../shared/errors.ts'
import type { SecretBox } from '../store/secret-box.ts'
import type { Tx } from '../store/store.ts'
import { findVenueAccount, NO_VENUE, saveVenueAccount, type VenueAccount, venueAccountSchema, venueConnectSchema } from './accounts.ts'
import { verifyVenueKey } from './verify.ts'
import { unknownExchange } from './exchange-ids.ts'

/**
 * What DELETE /api/v1/venue does (trading's, which knows the LIVE orders and models, handed over by
 * src/app.ts): throws while LIVE orders work, returns the account it removed.
 */
export type VenueDisconnect = (tx: Tx, tenantId: string) => Promise<VenueAccount>

/**
 * The venue routes, reaching exchanges where `settings` says (--venue-url, --ca-file); `secrets`
 * opens the data dir's secret box at first use.
 *
 * @example
 * venueRoutes(config.venues, () => openSecretBox(config.dataDir), disconnectVenue)
 */
export function venueRoutes(settings: VenueSettings, secrets: () => SecretBox, disconnect: VenueDisconnect): RouteSpec[] {
  const putVenue = defineRoute({
    method: 'PUT',
    path: '/api/v1/venue',
    summary: "Connects the tenant's exchange account: the key is checked against the venue, refused if it can withdraw, and stored encrypted",
    tag: 'venue',
    access: { sessionOnly: true, write: true },
    transaction: false,
    errors: ['validation_failed', 'venue_rejected', 'venue_key_unsafe', 'venue_unavailable'],
    body: venueConnectSchema,
    response: venueAccountSchema,
    handler: async (ctx) => {
      const { exchange, api_key, api_secret, password } = ctx.body
      const unknown = await unknownExchange(exchange)
      if (unknown) throw validationError('exchange', unknown)
      const verdict = await verifyVenueKey({ exchange, apiKey: api_key, secret: api_secret, password, venueUrl: settings.url, caFile: settings.caFile })
      return ctx.store.write((tx) => saveVenueAccount(tx, ctx.principal.tenantId, ctx.body, verdict, secrets(), ctx.principal.email, new Date()))
    },
  })

  const getVenue = defineRoute({
    method: 'GET',
    path: '/api/v1/venue',
    summary: "The tenant's venue account: exchange, key hint, status and what the key may do (DISCONNECTED with nulls when none); never the secret",
    tag: 'venue',
    access: { scopes: ['risk:read', 'risk:admin'] },
    response: venueAccountSchema,
    handler: async (ctx) => (await findVenueAccount(ctx.db, ctx.principal.tenantId)) ?? NO_VENUE,
  })

  const deleteVenue = defineRoute({
    method: 'DELETE',
    path: '/api/v1/venue',
    summary: 'Disconnects the venue and forgets its credentials, and turns LIVE models back to PAPER; refused while LIVE orders are open',
    tag: 'venue',
    access: { sessionOnly: true, write: true },
    errors: ['not_found', 'live_orders_open'],
    response: venueAccountSchema,
    handler: (ctx) => {
      return disconnect(ctx.tx, ctx.principal.tenantId)
    },
  })

  return [putVenue, getVenue, deleteVenue]
}
