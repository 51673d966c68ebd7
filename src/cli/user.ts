import { parseArgs, readStdin, required, UsageError } from './args.ts'
import type { CliCommand } from './command.ts'
import { commandConfig, STORE_FLAGS } from '../config.ts'
import { openApp } from '../app.ts'
import { findTenant } from '../tenants/tenants.ts'
import { createUser, ROLES, UserExists, type Role } from '../tenants/users.ts'
import { generatePassword, hashPassword } from '../auth/passwords.ts'

const FLAGS = { tenant: 'string', role: 'string', 'password-stdin': 'boolean', ...STORE_FLAGS } as const

export const userCreate: CliCommand = {
  name: 'user create',
  usage: 'bulwark user create EMAIL --tenant SLUG --role owner|admin|viewer [--password-stdin] [--data-dir DIR] [--secrets-dir DIR] [--database URL]',
  summary: 'create a user who logs in for a session; the password is read from stdin or generated and printed once',
  examples: [
    'echo "$PASSWORD" | bulwark user create ops@acme.test --tenant acme --role owner --password-stdin',
    'bulwark user create viewer@acme.test --tenant acme --role viewer',
  ],
  async run(argv) {
    const args = parseArgs(argv, FLAGS)
    const [email, extra] = args.positional
    if (!email) throw new UsageError('EMAIL is required')
    if (extra) throw new UsageError(`unexpected argument ${extra}`)
    if (!/^[^\s@]{1,64}@[^\s@]{1,255}$/.test(email)) throw new UsageError(`${email} is not an e-mail address`)
    const slug = required(args, 'tenant')
    const role = required(args, 'role')
    if (!(ROLES as readonly string[]).includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`)
    let password: string
    const generated = args.flags['password-stdin'] !== true
    if (generated) password = generatePassword()
    else {
      password = await readStdin()
      if (password.length < 8) {
        process.stderr.write('error: the password from stdin must have at least 8 characters\n')
        return 1
      }
    }
    const app = await openApp(commandConfig(args.flags))
    try {
      const tenant = await findTenant(app.store.read, slug)
      if (!tenant) {
        process.stderr.write(`error: no tenant ${slug}\n`)
        return 1
      }
      // Hashed before the change begins: only the database is awaited inside a write.
      const passwordHash = await hashPassword(password)
      const user = await app.store.write((tx) => createUser(tx, { tenantId: tenant.id, email, role: role as Role, passwordHash }))
      process.stdout.write(`created user ${user.email} (${user.id}), role ${user.role}, tenant ${tenant.slug}\n`)
      if (generated) process.stdout.write(`password (shown once): ${password}\n`)
      return 0
    } catch (err) {
      if (err instanceof UserExists) {
        process.stderr.write(`error: ${err.message}\n`)
        return 1
      }
      throw err
    } finally {
      await app.close()
    }
  },
}
