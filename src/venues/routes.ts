// The tenant's venue account over the API (SPEC 10). PUT reaches the venue before anything is
// stored, so it runs outside the pipeline's transaction and opens its own once the venue said yes.
import type { VenueSettings } from '../config.ts'
import { defineRoute, type RouteSpec } from '../http/route.ts'
import { DomainError, validationError } from '../shared/errors.ts'
import { write } from '../store/db.ts'
import type { SecretBox } from '../store/secret-box.ts'
import { deleteVenueAccount, findVenueAccount, NO_VENUE, saveVenueAccount, venueAccountSchema, venueConnectSchema } from './accounts.ts'
import { verifyVenueKey } from './verify.ts'
import { unknownExchange } from './exchange-ids.ts'

const NOT_CONNECTED = 'no venue is connected; connect one with PUT /api/v1/venue'

/**
 * The venue routes, reaching exchanges where `settings` says (--venue-url, --ca-file); `secrets`
 * opens the data dir's secret box at first use; `workingLiveOrders` counts the tenant's LIVE orders
 * still working (trading's, handed over by src/app.ts), which DELETE waits for.
 *
 * @example
 * venueRoutes(config.venues, () => openSecretBox(config.dataDir), workingLiveOrderCount)
 */
export function venueRoutes(settings: VenueSettings, secrets: () => SecretBox, workingLiveOrders: (tenantId: string) => number): RouteSpec[] {
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
      return write(() => saveVenueAccount(ctx.principal.tenantId, ctx.body, verdict, secrets(), ctx.principal.email, new Date()))
    },
  })

  const getVenue = defineRoute({
    method: 'GET',
    path: '/api/v1/venue',
    summary: "The tenant's venue account: exchange, key hint, status and what the key may do (DISCONNECTED with nulls when none); never the secret",
    tag: 'venue',
    access: { scopes: ['risk:read', 'risk:admin'] },
    response: venueAccountSchema,
    handler: (ctx) => findVenueAccount(ctx.principal.tenantId) ?? NO_VENUE,
  })

  const deleteVenue = defineRoute({
    method: 'DELETE',
    path: '/api/v1/venue',
    summary: 'Disconnects the venue and forgets its credentials; refused while LIVE orders are open',
    tag: 'venue',
    access: { sessionOnly: true, write: true },
    errors: ['not_found', 'live_orders_open'],
    response: venueAccountSchema,
    handler: (ctx) => {
      const working = workingLiveOrders(ctx.principal.tenantId)
      if (working > 0) {
        throw new DomainError(
          'live_orders_open',
          `${working} LIVE order${working === 1 ? ' is' : 's are'} still open; cancel them (or wait for them to end) before disconnecting`,
        )
      }
      const account = deleteVenueAccount(ctx.principal.tenantId)
      if (!account) throw new DomainError('not_found', NOT_CONNECTED)
      return account
    },
  })

  return [putVenue, getVenue, deleteVenue]
}
