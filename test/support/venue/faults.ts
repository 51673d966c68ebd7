// Fault switches and the request-weight limiter. A fault matches requests by method and path
// (any when left out) for `times` requests (every one until cleared when left out):
//   hang    accept the request and never answer (with execute: after doing what it asked)
//   status  answer 500/502/503 with a plain body (with execute: after doing it; Binance says a 5xx
//           leaves the outcome unknown)
//   drop    do what it asked, then destroy the connection before any answer
//   delay   answer `ms` later (with execute: after doing what it asked on arrival; without: the
//           request waits in front of the matching engine and is done, its timestamp checked
//           against recvWindow then, when the delay ends, whether or not the client still listens)
// "down" (the listener closed, connections refused) is the server's own switch.

export interface Match {
  method?: string
  path?: string
}

export type Fault =
  | { kind: 'hang'; match?: Match; execute?: boolean; times?: number }
  | { kind: 'status'; status?: 500 | 502 | 503 | 504; match?: Match; execute?: boolean; times?: number }
  | { kind: 'drop'; match?: Match; times?: number }
  | { kind: 'delay'; ms: number; match?: Match; execute?: boolean; times?: number }

export class Faults {
  private list: Fault[] = []

  add(fault: Fault): void {
    this.list.push({ ...fault })
  }

  clear(): void {
    this.list = []
  }

  /** The first fault that matches this request, counted against its `times`. */
  take(method: string, path: string): Fault | undefined {
    const fault = this.list.find((f) => (!f.match?.method || f.match.method === method) && (!f.match?.path || f.match.path === path))
    if (fault?.times !== undefined && --fault.times <= 0) this.list.splice(this.list.indexOf(fault), 1)
    return fault
  }
}

/**
 * REQUEST_WEIGHT per window, counted from the first request after a reset (not from the clock's
 * minute, so a test never sees the count restart mid-way). Past the limit: 429, -1003, Retry-After.
 */
export class WeightLimiter {
  private used = 0
  private since = 0

  constructor(
    public limit: number,
    public windowMs: number,
    private readonly now: () => number,
  ) {}

  /** Adds a request's weight; the seconds to wait when it goes past the limit. */
  charge(weight: number): { used: number; retryAfter?: number } {
    const now = this.now()
    if (this.used === 0 || now >= this.since + this.windowMs) {
      this.used = 0
      this.since = now
    }
    if (this.used + weight > this.limit) return { used: this.used, retryAfter: Math.max(1, Math.ceil((this.since + this.windowMs - now) / 1000)) }
    this.used += weight
    return { used: this.used }
  }

  reset(): void {
    this.used = 0
  }

  /** The X-MBX-USED-WEIGHT-(intervalNum)(intervalLetter) header's name. */
  header(): string {
    const seconds = Math.round(this.windowMs / 1000)
    return seconds % 60 === 0 ? `X-MBX-USED-WEIGHT-${seconds / 60}M` : `X-MBX-USED-WEIGHT-${seconds}S`
  }

  message(): string {
    const seconds = Math.round(this.windowMs / 1000)
    const per = seconds % 60 === 0 ? `${seconds / 60} MINUTE` : `${seconds} SECOND`
    return `Too much request weight used; current limit is ${this.limit} request weight per ${per}. Please use WebSocket Streams for live updates to avoid polling the API.`
  }
}
