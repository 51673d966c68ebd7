// One JSON line per event on stdout. Callers pass only what is safe to log: never a credential,
// a password, a signing secret or a request body.
export function log(fields: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify({ ts: new Date().toISOString(), ...fields }) + '\n')
}
