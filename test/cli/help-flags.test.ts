// What --help says a command takes is what it accepts: the flags of src/config.ts (serve's, and
// the venue flags of every command that reaches an exchange) against each command's --help, both
// ways, so that a flag added to one cannot be missing from the other.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { SERVE_FLAGS, VENUE_FLAGS } from '../../src/config.ts'
import { cli } from '../support/harness.ts'

const test = suite('cli: --help names every flag config.ts accepts')

/** The flags a usage line names, without their dashes. */
function flagsIn(usage: string): string[] {
  return [...new Set([...usage.matchAll(/--([a-z][a-z0-9-]*)/g)].map((m) => m[1]))].filter((name) => name !== 'help').sort()
}

async function usageOf(command: string[]): Promise<string> {
  const res = await cli([...command, '--help'])
  assert.is(res.code, 0, res.stderr)
  const line = /^Usage: (.*)$/m.exec(res.stdout)?.[1]
  assert.ok(line, res.stdout)
  return line!
}

test('serve --help names exactly the flags serve accepts', async () => {
  const named = flagsIn(await usageOf(['serve']))
  assert.equal(named, Object.keys(SERVE_FLAGS).sort())
  for (const flag of ['market-data', 'venue-url', 'ca-file']) assert.ok(named.includes(flag), flag)
  // The overview says the same.
  const overview = await cli(['--help'])
  const line = overview.stdout.split('\n').find((l) => l.trim().startsWith('bulwark serve '))!
  assert.equal(flagsIn(line), named)
})

test('every command that reaches an exchange names the venue flags', async () => {
  for (const command of [['prices', 'fetch'], ['venue', 'connect'], ['serve']]) {
    const named = flagsIn(await usageOf(command))
    for (const flag of Object.keys(VENUE_FLAGS)) assert.ok(named.includes(flag), `${command.join(' ')} --help lacks --${flag}`)
  }
})

test('a flag serve does not accept is a usage error', async () => {
  const missing = await cli(['serve', '--no-such-flag'])
  assert.is(missing.code, 2)
  assert.match(missing.stderr, /^error: unknown flag --no-such-flag\n/)
})

test.run()
