// Users of a tenant, who log in for a session (src/auth/). Table users (id, tenant_id, email,
// password_hash (scrypt, made by src/auth/passwords.ts), role, created_at).
import { newId } from '../store/ids.ts'
import { query, type Queries, type Tx } from '../store/store.ts'

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

const insertUser = query('INSERT INTO users (id, tenant_id, email, password_hash, role, created_at) VALUES (?, ?, ?, ?, ?, ?)')
const userByEmail = query<[string], UserRow>('SELECT * FROM users WHERE email = ?')
const userById = query<[string], UserRow>('SELECT * FROM users WHERE id = ?')

export class UserExists extends Error {}

/** The password comes hashed (hashPassword in src/auth/passwords.ts): the scheme is auth's. */
export async function createUser(tx: Tx, input: { tenantId: string; email: string; role: Role; passwordHash: string }): Promise<User> {
  const user: User = { id: newId('usr'), tenant_id: input.tenantId, email: input.email.toLowerCase(), role: input.role, created_at: new Date().toISOString() }
  return tx.savepoint(async () => {
    if (await tx.get(userByEmail, [user.email])) throw new UserExists(`user ${user.email} already exists`)
    await tx.run(insertUser, [user.id, user.tenant_id, user.email, input.passwordHash, user.role, user.created_at])
    return user
  })
}

export async function findUserWithHash(db: Queries, email: string): Promise<UserRow | undefined> {
  return db.get(userByEmail, [email])
}

export async function findUser(db: Queries, id: string): Promise<User | undefined> {
  const row = await db.get(userById, [id])
  if (!row) return undefined
  const { password_hash: _hash, ...user } = row
  return user
}
