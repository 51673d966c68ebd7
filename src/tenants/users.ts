// Users of a tenant, who log in for a session (src/auth/). Table users (id, tenant_id, email,
// password_hash (scrypt, made by src/auth/passwords.ts), role, created_at).
import { newId } from '../store/ids.ts'
import { savepoint, statement } from '../store/db.ts'

/** What a user session may do: owner and admin change things, viewer only reads. */
export const ROLES = ['owner', 'admin', 'viewer'] as const
export type Role = (typeof ROLES)[number]

export interface User {
  id: string
  tenant_id: string
  email: string
  role: Role
  created_at: string
}
interface UserRow extends User {
  password_hash: string
}

const insertUser = statement('INSERT INTO users (id, tenant_id, email, password_hash, role, created_at) VALUES (?, ?, ?, ?, ?, ?)')
const userByEmail = statement<[string], UserRow>('SELECT * FROM users WHERE email = ?')
const userById = statement<[string], UserRow>('SELECT * FROM users WHERE id = ?')

export class UserExists extends Error {}

/** The password comes hashed (hashPassword in src/auth/passwords.ts): the scheme is auth's. */
export function createUser(input: { tenantId: string; email: string; role: Role; passwordHash: string }): User {
  const user: User = { id: newId('usr'), tenant_id: input.tenantId, email: input.email.toLowerCase(), role: input.role, created_at: new Date().toISOString() }
  return savepoint(() => {
    if (userByEmail().get(user.email)) throw new UserExists(`user ${user.email} already exists`)
    insertUser().run(user.id, user.tenant_id, user.email, input.passwordHash, user.role, user.created_at)
    return user
  })
}

export function findUserWithHash(email: string): UserRow | undefined {
  return userByEmail().get(email)
}

export function findUser(id: string): User | undefined {
  const row = userById().get(id)
  if (!row) return undefined
  const { password_hash: _hash, ...user } = row
  return user
}
