// Gateway keys (SPEC 14): the Binance-style API key and secret a bot signs its requests with.
// STUB: the keys helper replaces this file (table gateway_keys, sql/018_gateway.sql).
import type { SecretBox } from '../store/secret-box.ts'
import type { Queries } from '../store/store.ts'

/** A live (not revoked) gateway key, its secret opened: for checking signatures only, never for an answer or a log. */
export interface GatewayKey {
  id: string
  tenantId: string
  name: string
  secret: string
}

/** The live key whose api_key this is, or undefined when unknown or revoked. */
export async function findGatewayKey(_db: Queries, _apiKey: string, _box: SecretBox): Promise<GatewayKey | undefined> {
  return undefined
}
