// What the benchmarks share: main runs only when the file is the script node was started with (a
// test runner sweeping test/ must not start a benchmark), and a server child stops as SIGTERM has it.
import type { ChildProcess } from 'node:child_process'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

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
