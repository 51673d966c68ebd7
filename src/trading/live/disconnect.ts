// Disconnecting a tenant's venue (DELETE /api/v1/venue, bulwark venue disconnect): refused while a
// LIVE order still works; otherwise the credentials are forgotten and every LIVE model turns back to
// PAPER in the same transaction, so no automation keeps aiming at a venue that is gone.
import { assertInWrite } from '../../store/db.ts'
import { DomainError } from '../../shared/errors.ts'
import { clearLiveModels } from '../../tenants/workspace.ts'
import { deleteVenueAccount, type VenueAccount } from '../../venues/accounts.ts'
import { workingLiveOrderCount } from './outbox.ts'

/**
 * Disconnects the tenant's venue; throws 409 live_orders_open while LIVE orders work, 404 not_found
 * when none is connected. Call inside write().
 *
 * @example
 * write(() => disconnectVenue(tenant.id)) // the account as it was
 */
export function disconnectVenue(tenantId: string): VenueAccount {
  assertInWrite()
  const working = workingLiveOrderCount(tenantId)
  if (working > 0) {
    throw new DomainError(
      'live_orders_open',
      `${working} LIVE order${working === 1 ? ' is' : 's are'} still open; cancel them (or wait for them to end) before disconnecting`,
    )
  }
  const account = deleteVenueAccount(tenantId)
  if (!account) throw new DomainError('not_found', 'no venue is connected; connect one with PUT /api/v1/venue')
  clearLiveModels(tenantId)
  return account
}
