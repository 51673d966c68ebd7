// Background services of `serve` (publisher schedule, webhook sender, maintenance): listed in
// src/app.ts, started after the server listens, stopped in reverse order on SIGTERM before the
// database closes.
export interface Service {
  name: string
  start(context: { dataDir: string }): () => void | Promise<void>
}
