// What the benchmarks share: main runs only when the file is the script node was started with (a
// test runner sweeping test/ must not start a benchmark), and a server child stops as SIGTERM has it.
import { type ChildProcess, spawn } from 'node:child_process'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The bulwark command line: the executable given with --bin, or the source through tsx. */
export function bulwarkCommand(args: string[], bin: string | undefined): [string, string[]] {
  return bin ? [resolve(bin), args] : [process.execPath, ['--import', 'tsx', join(ROOT, 'src/main.ts'), ...args]]
}

/**
 * `bulwark serve` logging to a file, as in production (a pipe that this busy process drains late
 * would block the server); resolves once its banner names the URL.
 *
 * @example
 * const server = await startLoggedServer(['--data-dir', dir], join(work, 'serve.log'), flag('bin'))
 */
export async function startLoggedServer(args: string[], logFile: string, bin: string | undefined): Promise<ChildProcess & { url: string }> {
  const [file, argv] = bulwarkCommand(['serve', '--port', '0', ...args], bin)
  const out = openSync(logFile, 'w')
  const child = spawn(file, argv, { cwd: ROOT, stdio: ['ignore', out, 'inherit'] })
  closeSync(out)
  let exited: number | null | undefined
  child.on('exit', (code) => (exited = code))
  for (let i = 0; i < 600; i++) {
    const match = /http:\/\/127\.0\.0\.1:\d+/.exec(readFileSync(logFile, 'utf8'))
    if (match) return Object.assign(child, { url: match[0] })
    if (exited !== undefined) break
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`server did not start: ${readFileSync(logFile, 'utf8')}`)
}

/**
 * Runs `main` when `moduleUrl` is the script being run; a failure prints its stack and exits 1.
 *
 * @example
 * runAsScript(import.meta.url, main)
 */
export function runAsScript(moduleUrl: string, main: () => Promise<void>): void {
  if (!process.argv[1] || resolve(process.argv[1]) !== fileURLToPath(moduleUrl)) return
  main().catch((error) => {
    console.error(error instanceof Error ? error.stack : error)
    process.exit(1)
  })
}

/** Sends SIGTERM and waits for the exit. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((done) => child.on('exit', done))
  child.kill('SIGTERM')
  await exited
}

/** The five models the publish and backtest benchmarks run: two of each closes-only rule, one that reads bars. */
export const BENCH_MODELS: { key: string; strategy: string; parameters: Record<string, number> }[] = [
  { key: 'ema-a', strategy: 'ema_cross', parameters: { fast_ema: 20, slow_ema: 50, band_pct: 0.5 } },
  { key: 'ema-b', strategy: 'ema_cross', parameters: { fast_ema: 10, slow_ema: 30, band_pct: 1 } },
  { key: 'z-a', strategy: 'zscore_reversion', parameters: { lookback: 20, entry_z: -1.5, exit_z: 0 } },
  { key: 'z-b', strategy: 'zscore_reversion', parameters: { lookback: 30, entry_z: -2, exit_z: 0.5 } },
  { key: 'donchian', strategy: 'donchian_breakout', parameters: { entry_lookback: 20, exit_lookback: 10 } },
]
