// The cluster's processes: started with their output in a log file each and their pid recorded (for
// the watchdog), signalled together with their descendants, found again through /proc.
import { type ChildProcess, spawn } from 'node:child_process'
import { appendFileSync, closeSync, existsSync, openSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { serverUser, sh, watchdog } from '../postgres.ts'

/**
 * Starts `command` in `dir`, its output appended to `dir/<name>.log`. `asPostgres`: with the
 * postgres user's uid and gid (Patroni and PostgreSQL refuse root). Not through runuser, which
 * forks and waits: the pid must be the program's own, for kill() to reach it.
 */
export function launch(
  dir: string,
  name: string,
  command: string,
  args: string[],
  options: { asPostgres?: boolean; env?: NodeJS.ProcessEnv } = {},
): ChildProcess {
  const fd = openSync(join(dir, `${name}.log`), 'a')
  const user = options.asPostgres && process.getuid?.() === 0 ? serverUser() : {}
  try {
    const child = spawn(command, args, { cwd: dir, stdio: ['ignore', fd, fd], env: { ...process.env, ...options.env }, ...user })
    if (child.pid) appendFileSync(join(dir, 'pids'), `${child.pid}\n`)
    // Errors (a missing binary) surface as an exit the caller sees; never an unhandled event.
    child.on('error', () => {})
    return child
  } finally {
    closeSync(fd)
  }
}

export function logOf(dir: string, name: string): string {
  const file = join(dir, `${name}.log`)
  return existsSync(file) ? readFileSync(file, 'utf8') : ''
}

/** The postmaster's pid from its data dir, while it has one. */
export function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
    return pid > 0 && alive(pid) ? pid : undefined
  } catch {
    return undefined
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return !isZombie(pid)
  } catch {
    return false
  }
}

function isZombie(pid: number): boolean {
  try {
    return statOf(pid)?.state === 'Z'
  } catch {
    return false
  }
}

/** state and parent of a process from /proc/<pid>/stat (the name, in parentheses, may hold spaces). */
function statOf(pid: number): { state: string; ppid: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
    return { state: fields[0], ppid: Number(fields[1]) }
  } catch {
    return undefined
  }
}

/** `roots` and every process descending from them. */
export function withDescendants(roots: number[]): number[] {
  const children = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (!pid) continue
    const ppid = statOf(pid)?.ppid
    if (ppid) children.set(ppid, [...(children.get(ppid) ?? []), pid])
  }
  const all = new Set<number>()
  const queue = [...roots]
  while (queue.length) {
    const pid = queue.shift()!
    if (all.has(pid)) continue
    all.add(pid)
    queue.push(...(children.get(pid) ?? []))
  }
  return [...all]
}

/** Sends `signal` to each pid; one already gone is no error. */
export function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal)
    } catch {
      // Gone already.
    }
  }
}

/** Resolves once none of `pids` is running (zombies count as gone), or after `ms`. */
export async function waitGone(pids: number[], ms: number): Promise<void> {
  const deadline = Date.now() + ms
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
}

/**
 * After this process is gone however it ended (even SIGKILL, which runs no exit hook), kills what
 * the cluster left: the recorded pids (Patroni, etcd, HAProxy), the postmasters named in the data
 * dirs (Patroni starts them in sessions of their own), then removes the dir.
 */
export function clusterWatchdog(dir: string, dataDirs: string[]): void {
  const postmasters = dataDirs.map((d) => `[ -f ${sh(join(d, 'postmaster.pid'))} ] && kill -9 $(head -1 ${sh(join(d, 'postmaster.pid'))})`).join('; ')
  watchdog(`[ -f ${sh(join(dir, 'pids'))} ] && kill -9 $(cat ${sh(join(dir, 'pids'))}); ${postmasters}; sleep 1; rm -rf ${sh(dir)}`)
}
