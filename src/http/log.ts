// One JSON line per event on stdout. Callers pass only what is safe to log: never a credential,
// a password, a signing secret or a request body.
let pending: string[] = []
let scheduled = false

function flush(): void {
  scheduled = false
  if (!pending.length) return
  const text = pending.join('')
  pending = []
  process.stdout.write(text)
}

process.on('exit', flush)

export function log(fields: Record<string, unknown>): void {
  flush()   // request lines gathered so far come first: the log stays in order
  process.stdout.write(JSON.stringify({ ts: new Date().toISOString(), ...fields }) + '\n')
}

/**
 * The per-request line: gathered and written once per event-loop turn, because stdout to a file or
 * a pipe is a synchronous write and one system call per request shows under load.
 */
export function logRequest(fields: Record<string, unknown>): void {
  pending.push(JSON.stringify({ ts: new Date().toISOString(), ...fields }) + '\n')
  if (!scheduled) { scheduled = true; setImmediate(flush) }
}
