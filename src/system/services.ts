// Background services of `serve` (publisher schedule, webhook sender, maintenance): started after
// the server listens, stopped in reverse order on SIGTERM before the database closes.
export interface Service {
  name: string
  start(context: { dataDir: string }): () => void | Promise<void>
}

export const services: Service[] = []

export function registerService(service: Service): void {
  services.push(service)
}
