// Real HTTPS receivers on 127.0.0.1 for the webhook tests and benchmark: a throwaway CA
// (test/support/test-ca.ts) with a server certificate for 127.0.0.1, and servers that record every
// request (raw body and headers) and answer as each test says.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type Server as HttpsServer } from 'node:https'
import type { IncomingHttpHeaders, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestCa } from '../support/test-ca.ts'

export { makeTestCa, type TestCa } from '../support/test-ca.ts'

export interface Received {
  path: string
  headers: IncomingHttpHeaders
  raw: string
  body: any
  arrivedAt: number
}

/** What to answer: a status (default 200), after a delay, or never (hang until the client gives up). */
export type Answer = { status?: number; delayMs?: number; hang?: boolean; headers?: Record<string, string> }
export type Behaviour = (request: Received, seenBefore: number) => Answer | undefined

export interface Receiver {
  url: string
  port: number
  received: Received[]
  /** Requests to one path. */
  at(path: string): Received[]
  behave(path: string, behaviour: Behaviour): void
  /** Requests currently waiting for an answer (hanging or delayed). */
  open(): number
  close(): Promise<void>
}

export async function startReceiver(ca: TestCa, port = 0): Promise<Receiver> {
  const received: Received[] = []
  const behaviours = new Map<string, Behaviour>()
  const pending = new Set<ServerResponse>()
  const counts = new Map<string, number>() // path + body id -> requests seen
  const server: HttpsServer = createServer({ key: ca.key, cert: ca.cert, keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      let body: unknown
      try {
        body = JSON.parse(raw)
      } catch {
        body = undefined
      }
      const path = req.url ?? '/'
      const request: Received = { path, headers: req.headers, raw, body, arrivedAt: Date.now() }
      const key = `${path} ${(body as any)?.id}`
      const seenBefore = counts.get(key) ?? 0
      counts.set(key, seenBefore + 1)
      received.push(request)
      const answer = behaviours.get(path)?.(request, seenBefore) ?? {}
      if (answer.hang) {
        pending.add(res)
        res.on('close', () => pending.delete(res))
        return
      }
      const reply = () => {
        pending.delete(res)
        res.writeHead(answer.status ?? 200, answer.headers ?? {})
        res.end('ok')
      }
      if (answer.delayMs) {
        pending.add(res)
        setTimeout(reply, answer.delayMs)
      } else reply()
    })
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const actual = (server.address() as AddressInfo).port
  return {
    url: `https://127.0.0.1:${actual}`,
    port: actual,
    received,
    at: (path) => received.filter((r) => r.path === path),
    behave: (path, behaviour) => {
      behaviours.set(path, behaviour)
    },
    open: () => pending.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of pending) res.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** An independent X-Service-Signature check: HMAC-SHA256 of the raw body keyed with the secret string. */
export function serviceSignatureValid(secret: string, raw: string, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string') return false
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`)
  const given = Buffer.from(header)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** Polls until `ready()` holds; fails with `what` after a generous limit (a wait, not a timing assert). */
export async function waitUntil(what: string, ready: () => boolean | Promise<boolean>, limitMs = 20_000): Promise<void> {
  const until = Date.now() + limitMs
  while (!(await ready())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}
