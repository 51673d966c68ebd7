// Scopes an API key can carry. (The roles a user session can have are users': src/tenants/users.ts.)
export const SCOPES = ['signals:read', 'trades:read', 'orders:write', 'risk:read', 'risk:admin', 'webhooks:write'] as const
export type Scope = (typeof SCOPES)[number]

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value)
}
