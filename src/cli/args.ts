// A small, strict flag parser: unknown flags and missing values are usage errors (exit 2).
export class UsageError extends Error {}

export type FlagSpec = Record<string, 'string' | 'boolean' | 'list'>

export interface ParsedArgs {
  positional: string[]
  flags: Record<string, string | boolean | string[] | undefined>
}

export function parseArgs(argv: string[], spec: FlagSpec): ParsedArgs {
  const positional: string[] = []
  const flags: ParsedArgs['flags'] = {}
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--') {
      positional.push(...argv.slice(i + 1))
      break
    }
    if (!arg.startsWith('--')) {
      positional.push(arg)
      continue
    }
    const eq = arg.indexOf('=')
    const name = arg.slice(2, eq === -1 ? undefined : eq)
    const kind = spec[name]
    if (!kind) throw new UsageError(`unknown flag --${name}`)
    if (kind === 'boolean') {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`)
      flags[name] = true
      continue
    }
    const value = eq !== -1 ? arg.slice(eq + 1) : argv[++i]
    if (value === undefined || (eq === -1 && value.startsWith('--'))) throw new UsageError(`--${name} needs a value`)
    if (kind === 'list') flags[name] = [...((flags[name] as string[] | undefined) ?? []), value]
    else flags[name] = value
  }
  return { positional, flags }
}

export function str(args: ParsedArgs, name: string): string | undefined {
  return args.flags[name] as string | undefined
}

export function required(args: ParsedArgs, name: string): string {
  const value = str(args, name)
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`)
  return value
}

export function positiveNumber(args: ParsedArgs, name: string, integer: boolean): number | undefined {
  const raw = str(args, name)
  if (raw === undefined) return undefined
  const n = Number(raw)
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new UsageError(`--${name} must be a positive ${integer ? 'integer' : 'number'}`)
  }
  return n
}

/** Everything on stdin, less one trailing newline: how secrets reach a command (never as a flag, which ps and shell history keep). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '')
}
