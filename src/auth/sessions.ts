// User sessions: HS256 JWTs signed with jose, keyed by a secret generated at first start and kept in
// the data dir with mode 0600. Only HS256 is accepted, so `alg: none` and algorithm swaps fail.
import { randomUUID } from 'node:crypto'
import { SignJWT, jwtVerify } from 'jose'
import { readOrCreateKeyFile } from '../store/key-file.ts'
import type { Role } from '../tenants/users.ts'

export const ISSUER = 'bulwark'
export const AUDIENCE = 'bulwark-api'
export const SESSION_SECONDS = 3600
const ALGORITHMS = ['HS256']

let secret: Uint8Array | undefined

export function loadSigningKey(dataDir: string): void {
  secret = readOrCreateKeyFile(dataDir, 'jwt-signing.key')
}

function key(): Uint8Array {
  if (!secret) throw new Error('session signing key not loaded')
  return secret
}

export interface SessionClaims {
  sub: string
  tid: string
  role: Role
  email: string
}

export async function issueSession(claims: SessionClaims): Promise<string> {
  return new SignJWT({ tid: claims.tid, role: claims.role, email: claims.email })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(claims.sub)
    .setIssuedAt()
    .setExpirationTime(`${SESSION_SECONDS}s`)
    .setJti(randomUUID())
    .sign(key())
}

/** The verified claims, or undefined for any token that is not ours, intact and current. */
export async function verifySession(token: string): Promise<SessionClaims | undefined> {
  try {
    const { payload } = await jwtVerify(token, key(), {
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
}
