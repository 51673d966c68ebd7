// argv -> one subcommand; nothing else. Loaded by src/main.ts once the runtime is known to be Node 24;
// the executable's entry point.
import { UsageError } from './args.ts'
import { ConfigError } from '../config.ts'
import type { CliCommand } from './command.ts'
import { COMMANDS } from './commands.ts'
import { VERSION } from '../version.ts'
import { startStep } from './start-trace.ts'

function usage(): string {
  const lines = ['Bulwark: self-hosted signals, trades and risk control.', '', 'Usage:']
  for (const c of COMMANDS) lines.push(`  ${c.usage}`, `      ${c.summary}`)
  lines.push('  bulwark --help | --version', '', 'Every command takes --data-dir DIR (default ./bulwark-data, or env BULWARK_DATA_DIR).', '', 'Examples:')
  for (const c of COMMANDS) for (const e of c.examples) lines.push(`  ${e}`)
  lines.push('', 'Exit codes: 0 done, 1 failed, 2 bad usage.')
  return `${lines.join('\n')}\n`
}

function commandHelp(c: CliCommand): string {
  return `${[`Usage: ${c.usage}`, '', c.summary, '', 'Examples:', ...c.examples.map((e) => `  ${e}`)].join('\n')}\n`
}

async function main(argv: string[]): Promise<number> {
  // Every module of the executable is evaluated by now: the first step of serve's start trace.
  startStep('modules-loaded')
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    process.stdout.write(usage())
    return argv.length === 0 ? 2 : 0
  }
  if (argv[0] === '--version' || argv[0] === '-v') {
    process.stdout.write(`${VERSION}\n`)
    return 0
  }
  const command = COMMANDS.find((c) => {
    const words = c.name.split(' ')
    return words.every((w, i) => argv[i] === w)
  })
  if (!command) {
    process.stderr.write(`error: unknown command ${JSON.stringify(argv.slice(0, 2).join(' '))}\n\n${usage()}`)
    return 2
  }
  const rest = argv.slice(command.name.split(' ').length)
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(commandHelp(command))
    return 0
  }
  try {
    return await command.run(rest)
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      process.stderr.write(`error: ${err.message}\nusage: ${command.usage}\n`)
      return 2
    }
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`)
    return 1
  }
}

// main() answers every error with an exit code of its own.
void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code
})
