// Passwords: scrypt (N=2^15, r=8, p=1), 16-byte salt, stored as scrypt$N$r$p$salt$hash (base64).
import type { ScryptOptions } from 'node:crypto'
import { nodeCrypto } from '../shared/crypto.ts'

const N = 32768,
  R = 8,
  P = 1,
  KEYLEN = 32

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    nodeCrypto().scrypt(password, salt, KEYLEN, { ...options, maxmem: 128 * N * R * 2 }, (err, key) => (err ? reject(err) : resolve(key))),
  )
}

export async function hashPassword(password: string): Promise<string> {
  const salt = nodeCrypto().randomBytes(16)
  const key = await derive(password, salt, { N, r: R, p: P })
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || !hash) return false
  const expected = Buffer.from(hash, 'base64')
  const key = await derive(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) })
  return key.length === expected.length && nodeCrypto().timingSafeEqual(key, expected)
}

let dummy: Promise<string> | undefined
/** A hash of a random password: checked when the e-mail is unknown, so timing tells nothing. */
export function dummyHash(): Promise<string> {
  dummy ??= hashPassword(nodeCrypto().randomBytes(12).toString('base64'))
  return dummy
}

export function generatePassword(): string {
  return nodeCrypto().randomBytes(18).toString('base64url')
}
