// Disconnecting a tenant's venue (DELETE /api/v1/venue, bulwark venue disconnect): refused while a
// LIVE order still works; otherwise the credentials are forgotten and every LIVE model turns back to
// PAPER in the same transaction, so no automation keeps aiming at a venue that is gone.
import { DomainError } from '../../shared/errors.ts'
import type { Tx } from '../../store/store.ts'
import { clearLiveModels } from '../../tenants/workspace.ts'
import { deleteVenueAccount, type VenueAccount } from '../../venues/accounts.ts'
import { workingLiveOrderCount } from './outbox.ts'

/**
 * Disconnects the tenant's venue; throws 409 live_orders_open while LIVE orders work, 404 not_found
 * when none is connected. In the transaction `tx`.
 *
 * @example
 * await store.write((tx) => disconnectVenue(tx, tenant.id)) // the account as it was
 */
export async function disconnectVenue(tx: Tx, tenantId: string): Promise<VenueAccount> {
  const working = await workingLiveOrderCount(tx, tenantId)
  if (working > 0) {
    throw new DomainError(
      'live_orders_open',
      `${working} LIVE order${working === 1 ? ' is' : 's are'} still open; cancel them (or wait for them to end) before disconnecting`,
    )
  }
  const account = await deleteVenueAccount(tx, tenantId)
  if (!account) throw new DomainError('not_found', 'no venue is connected; connect one with PUT /api/v1/venue')
  await clearLiveModels(tx, tenantId)
  return account
}
