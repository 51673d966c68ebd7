// HTTP/1.1 over a bare socket, for requests fetch refuses or rewrites: absolute-form and dot-segment
// targets, invalid percent encodings, raw bytes in headers, duplicate or contradictory headers.
import { connect } from 'node:net'

export interface RawAnswer {
  status: number // 0 when the server closed without an answer
  headers: Map<string, string>
  body: string
  json: any
}

/** Sends the bytes as they are and reads until the server closes (send Connection: close). */
export function rawExchange(port: number, bytes: string | Buffer, options: { timeoutMs?: number; closeAfterMs?: number } = {}): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    let settled = false
    const finish = () => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve(parse(Buffer.concat(chunks)))
    }
    const timer = setTimeout(finish, options.timeoutMs ?? 5000)
    socket.on('data', (d) => chunks.push(d))
    socket.on('end', finish)
    socket.on('close', finish)
    socket.on('error', finish)
    socket.write(bytes)
    if (options.closeAfterMs !== undefined) setTimeout(finish, options.closeAfterMs)
  })
}

function parse(data: Buffer): RawAnswer {
  // Interim 1xx answers (100 Continue) come before the final one.
  while (/^HTTP\/1\.[01] 1\d\d /.test(data.toString('latin1', 0, 16))) {
    const end = data.indexOf('\r\n\r\n')
    if (end < 0) break
    data = data.subarray(end + 4)
  }
  const text = data.toString('latin1')
  const end = text.indexOf('\r\n\r\n')
  const headers = new Map<string, string>()
  if (end < 0) return { status: 0, headers, body: '', json: undefined }
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n')
  for (const line of lines) {
    const colon = line.indexOf(':')
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
  }
  let bodyBytes = data.subarray(Buffer.byteLength(text.slice(0, end + 4), 'latin1'))
  const length = headers.get('content-length')
  if (length !== undefined) bodyBytes = bodyBytes.subarray(0, Number(length))
  const body = bodyBytes.toString('utf8')
  let json: unknown
  try {
    json = body ? JSON.parse(body) : undefined
  } catch {
    json = undefined
  }
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body, json }
}

/** A request in wire format; Content-Length is added for a body unless a header list sets one. */
export function wire(
  method: string,
  target: string,
  headers: [string, string][] = [],
  body?: string | Buffer,
  options: { version?: string; host?: boolean } = {},
): Buffer {
  const bytes = body === undefined ? Buffer.alloc(0) : typeof body === 'string' ? Buffer.from(body, 'utf8') : body
  const all: [string, string][] = [...(options.host === false ? [] : [['Host', '127.0.0.1'] as [string, string]]), ['Connection', 'close'], ...headers]
  if (body !== undefined && !all.some(([n]) => /^(content-length|transfer-encoding)$/i.test(n))) all.push(['Content-Length', String(bytes.length)])
  const head = `${method} ${target} ${options.version ?? 'HTTP/1.1'}\r\n${all.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`
  return Buffer.concat([Buffer.from(head, 'latin1'), bytes])
}

/** A UTF-8 string as the latin1 text whose bytes are its UTF-8 encoding (for wire()). */
export function utf8Bytes(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1')
}
