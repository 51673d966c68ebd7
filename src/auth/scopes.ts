// Scopes an API key can carry, and the roles a user session can have.
export const SCOPES = ['signals:read', 'trades:read', 'orders:write', 'risk:read', 'risk:admin', 'webhooks:write'] as const
export type Scope = (typeof SCOPES)[number]

export const ROLES = ['owner', 'admin', 'viewer'] as const
export type Role = (typeof ROLES)[number]

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value)
}

/** Who is calling: resolved once per request by the guard, used by every tenant-bound query. */
export interface Principal {
  kind: 'api_key' | 'session'
  tenantId: string
  credentialId: string      // API key id or the session's user id: the rate-limit bucket
  userId: string | null
  email: string             // incident actor
  role: Role | null         // sessions only
  scopes: readonly Scope[]  // API keys only
}
