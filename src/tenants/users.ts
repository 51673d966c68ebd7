// Users of a tenant, who log in for a session. Table users (id, tenant_id, email, password_hash
// (scrypt), role, created_at).
import { newId } from '../store/ids.ts'
import { statement, write } from '../store/db.ts'
import { hashPassword } from '../auth/passwords.ts'
import type { Role } from '../auth/scopes.ts'

export interface User { id: string; tenant_id: string; email: string; role: Role; created_at: string }
interface UserRow extends User { password_hash: string }

const insertUser = statement('INSERT INTO users (id, tenant_id, email, password_hash, role, created_at) VALUES (?, ?, ?, ?, ?, ?)')
const userByEmail = statement<[string], UserRow>('SELECT * FROM users WHERE email = ?')
const userById = statement<[string], UserRow>('SELECT * FROM users WHERE id = ?')

export class UserExists extends Error {}

export async function createUser(input: { tenantId: string; email: string; role: Role; password: string }): Promise<User> {
  const passwordHash = await hashPassword(input.password)
  const user: User = { id: newId('usr'), tenant_id: input.tenantId, email: input.email.toLowerCase(), role: input.role, created_at: new Date().toISOString() }
  return write(() => {
    if (userByEmail().get(user.email)) throw new UserExists(`user ${user.email} already exists`)
    insertUser().run(user.id, user.tenant_id, user.email, passwordHash, user.role, user.created_at)
    return user
  })
}

export function userWithHash(email: string): UserRow | undefined {
  return userByEmail().get(email)
}

export function userOf(id: string): User | undefined {
  const row = userById().get(id)
  if (!row) return undefined
  const { password_hash: _hash, ...user } = row
  return user
}
