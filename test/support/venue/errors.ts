// Binance's error answer: JSON {code, msg} (errors.md) with the HTTP status Binance sends for it.

/** -2014 and -2015 come with 401, -1003 with 429; every other refusal of a request is a 400. */
function statusOf(code: number): number {
  if (code === -2014 || code === -2015) return 401
  if (code === -1003) return 429
  return 400
}

export class VenueError extends Error {
  readonly status: number
  constructor(
    readonly code: number,
    readonly msg: string,
    status?: number,
  ) {
    super(`${code} ${msg}`)
    this.status = status ?? statusOf(code)
  }
}
