// User sessions: HS256 JWTs signed with jose, keyed by a secret generated at first start and kept in
// the data dir with mode 0600. Only HS256 is accepted, so `alg: none` and algorithm swaps fail.
import { nodeCrypto } from '../shared/crypto.ts'
import { SignJWT, jwtVerify } from 'jose'
import { readOrCreateKeyFile } from '../store/key-file.ts'
import type { Role } from '../tenants/users.ts'

const ISSUER = 'bulwark'
export const AUDIENCE = 'bulwark-api'
export const SESSION_SECONDS = 3600
const ALGORITHMS = ['HS256']

export interface SessionClaims {
  sub: string
  tid: string
  role: Role
  email: string
}

/** Issues and checks the sessions of one data dir, with the key that data dir keeps. */
export interface Sessions {
  issue(claims: SessionClaims): Promise<string>
  /** The verified claims, or undefined for any token that is not ours, intact and current. */
  verify(token: string): Promise<SessionClaims | undefined>
}

/**
 * The data dir's sessions: its signing key is made at first start (DATA_DIR/jwt-signing.key).
 *
 * @example
 * const sessions = openSessions('/var/lib/bulwark')
 * const claims = await sessions.verify(await sessions.issue({ sub: 'usr_1', tid: 'ten_1', role: 'owner', email: 'o@x.test' }))
 */
export function openSessions(dataDir: string): Sessions {
  const key = readOrCreateKeyFile(dataDir, 'jwt-signing.key')
  return {
    issue(claims) {
      return new SignJWT({ tid: claims.tid, role: claims.role, email: claims.email })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject(claims.sub)
        .setIssuedAt()
        .setExpirationTime(`${SESSION_SECONDS}s`)
        .setJti(nodeCrypto().randomUUID())
        .sign(key)
    },
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key, {
          issuer: ISSUER,
          audience: AUDIENCE,
          algorithms: ALGORITHMS,
          requiredClaims: ['sub', 'exp', 'iat', 'jti', 'tid'],
        })
        if (typeof payload.sub !== 'string' || typeof payload.tid !== 'string') return undefined
        return { sub: payload.sub, tid: payload.tid, role: payload.role as Role, email: String(payload.email ?? '') }
      } catch {
        return undefined
      }
    },
  }
}
