// One JSON line per event on stdout. Callers pass only what is safe to log: never a credential,
// a password, a signing secret or a request body.
const FLUSH_MS = 20
const FLUSH_BYTES = 16 * 1024

let pending: string[] = []
let pendingBytes = 0
let timer: NodeJS.Timeout | undefined

function flush(): void {
  if (timer) {
    clearTimeout(timer)
    timer = undefined
  }
  if (!pending.length) return
  const text = pending.join('')
  pending = []
  pendingBytes = 0
  process.stdout.write(text)
}

process.on('exit', flush)

export function log(fields: Record<string, unknown>): void {
  flush() // request lines gathered so far come first: the log stays in order
  process.stdout.write(`${JSON.stringify({ ts: new Date().toISOString(), ...fields })}\n`)
}

/**
 * The per-request line, written with its neighbours at most 20 ms later: stdout to a file or a pipe
 * is a synchronous write, and one per request (a blocked one, when the disk is busy) shows under load.
 */
export function logRequest(fields: Record<string, unknown>): void {
  const line = `${JSON.stringify({ ts: new Date().toISOString(), ...fields })}\n`
  pending.push(line)
  pendingBytes += line.length
  if (pendingBytes >= FLUSH_BYTES) flush()
  else timer ??= setTimeout(flush, FLUSH_MS).unref()
}
