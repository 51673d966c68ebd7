// The guard every route declares: who may call it (public, any credential, a scope, a session role).
import { DomainError } from '../shared/errors.ts'
import { findLiveKey, touchApiKey } from './api-keys.ts'
import { decodeProtectedHeader } from 'jose'
import type { Sessions } from './sessions.ts'
import { OIDC_ALGORITHMS, OidcUnavailable, type OidcVerifier } from './oidc.ts'
import { findUser, findUserWithHash, type User } from '../tenants/users.ts'
import { log } from '../shared/log.ts'
import type { Access, Guard, Principal } from '../http/route.ts'
import type { Store } from '../store/store.ts'

const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="bulwark"' }

function unauthenticated(detail: string): DomainError {
  return new DomainError('unauthenticated', detail, { headers: CHALLENGE })
}

const userCache = new Map<string, string>()

function algorithmOf(token: string): string {
  try {
    return String(decodeProtectedHeader(token).alg)
  } catch {
    return ''
  }
}

/**
 * The guard of this process: API keys, the data dir's sessions, and an external issuer's tokens
 * when one is configured (--oidc-issuer). It reads credentials and users through `store` (committed
 * data, before and outside the request's change).
 *
 * @example
 * const guard = createGuard({ sessions: openSessions(dataDir), oidc: undefined, store })
 * const principal = await guard.authenticate(req.headers.authorization, new Date())
 */
export function createGuard(deps: { sessions: Sessions; oidc: OidcVerifier | undefined; store: Store }): Guard {
  const { sessions, oidc, store } = deps
  async function authenticate(header: string | undefined, now: Date): Promise<Principal> {
    if (!header) throw unauthenticated('missing Authorization header; send Authorization: Bearer <API key or JWT>')
    const match = /^Bearer ([\x21-\x7e]{1,4096})$/i.exec(header)
    if (!match) throw unauthenticated('Authorization header must be "Bearer <API key or JWT>"')
    const credential = match[1]
    if (credential.startsWith('sk_')) {
      const key = await findLiveKey(store, credential, now)
      if (!key) throw unauthenticated('API key is invalid, revoked or expired')
      void touchApiKey(store, key.id, now) // its own write, not awaited: it never rejects
      const email = key.created_by ? (userCache.get(key.created_by) ?? (await cacheEmail(store, key.created_by))) : 'operator@localhost'
      return { kind: 'api_key', tenantId: key.tenant_id, credentialId: key.id, userId: key.created_by, email, role: null, scopes: key.scopes }
    }
    const user = oidc && OIDC_ALGORITHMS.includes(algorithmOf(credential)) ? await externalUser(credential) : await sessionUser(credential)
    return { kind: 'session', tenantId: user.tenant_id, credentialId: user.id, userId: user.id, email: user.email, role: user.role, scopes: [] }
  }

  async function sessionUser(token: string): Promise<User> {
    const claims = await sessions.verify(token)
    const user = claims && (await findUser(store.read, claims.sub))
    if (!user || user.tenant_id !== claims!.tid) throw unauthenticated('session token is invalid or expired')
    return user
  }

  async function externalUser(token: string): Promise<User> {
    let email: string | undefined
    try {
      email = await oidc!.verify(token)
    } catch (error) {
      if (!(error instanceof OidcUnavailable)) throw error
      log({ level: 'warn', msg: 'oidc unavailable', error: error.message })
      throw new DomainError('service_unavailable', "the identity provider's signing keys could not be fetched; try again shortly", {
        headers: { 'Retry-After': '30' },
      })
    }
    if (!email) throw unauthenticated('access token is invalid or expired')
    const row = await findUserWithHash(store.read, email)
    if (!row) throw unauthenticated("no user of this service has the access token's email")
    return { id: row.id, tenant_id: row.tenant_id, email: row.email, role: row.role, created_at: row.created_at }
  }

  return { authenticate, authorize }
}

async function cacheEmail(store: Store, userId: string): Promise<string> {
  const email = (await findUser(store.read, userId))?.email ?? 'operator@localhost'
  userCache.set(userId, email)
  return email
}

function authorize(principal: Principal, access: Exclude<Access, 'public'>): void {
  if (principal.kind === 'api_key') {
    if (access.sessionOnly) throw new DomainError('session_required', 'this endpoint needs a user session (JWT from POST /api/v1/auth/login), not an API key')
    if (access.scopes && !access.scopes.some((s) => principal.scopes.includes(s))) {
      throw new DomainError('insufficient_scope', `API key lacks scope ${access.scopes.join(' or ')}`, {
        headers: { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${access.scopes.join(' ')}"` },
      })
    }
    return
  }
  if (access.write && principal.role === 'viewer') {
    throw new DomainError('forbidden_role', 'role viewer may only read; this needs owner or admin')
  }
}
