// The test venue as a process of its own (startVenueChild): options from VENUE_OPTIONS, control
// calls over IPC as {id, method, args} -> {id, result} or {id, error}; it ends with its parent.
// Imported any other way (a test run's pattern matching this folder), it does nothing.
import { startVenue } from './index.ts'

async function serve(options: string): Promise<void> {
  const send = (message: unknown) => process.send?.(message)
  const venue = await startVenue(JSON.parse(options))
  const { url: _url, port, caFile: _caFile, close, ...control } = venue
  const methods = control as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
  process.on('message', async (m: { id: number; method: string; args: unknown[] }) => {
    try {
      send({ id: m.id, result: (await methods[m.method](...m.args)) ?? null })
    } catch (error) {
      send({ id: m.id, error: error instanceof Error ? error.message : String(error) })
    }
  })
  const stop = async () => {
    await close()
    process.exit(0)
  }
  process.on('disconnect', stop)
  process.on('SIGTERM', stop)
  send({ ready: { port, methods: Object.keys(control) } })
}

if (process.send && process.env.VENUE_OPTIONS) await serve(process.env.VENUE_OPTIONS)
