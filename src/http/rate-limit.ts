// Fixed one-minute windows per key (a credential, or an address for login), in memory: a single
// process serves a data dir, so no shared store is needed.
export interface RateDecision {
  allowed: boolean
  limit: number
  remaining: number
  resetSeconds: number
}

export class RateLimiter {
  private windowStart = 0
  private counts = new Map<string, number>()
  constructor(
    readonly limit: number,
    private readonly windowMs = 60_000,
  ) {}

  take(key: string, nowMs: number): RateDecision {
    const start = nowMs - (nowMs % this.windowMs)
    if (start !== this.windowStart) {
      this.windowStart = start
      this.counts.clear()
    }
    const used = (this.counts.get(key) ?? 0) + 1
    this.counts.set(key, used)
    return {
      allowed: used <= this.limit,
      limit: this.limit,
      remaining: Math.max(0, this.limit - used),
      resetSeconds: Math.ceil((start + this.windowMs - nowMs) / 1000),
    }
  }
}

export function rateHeaders(d: RateDecision): Record<string, string> {
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(d.limit),
    'RateLimit-Remaining': String(d.remaining),
    'RateLimit-Reset': String(d.resetSeconds),
  }
  if (!d.allowed) headers['Retry-After'] = String(d.resetSeconds)
  return headers
}
