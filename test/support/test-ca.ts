// A throwaway CA made with openssl and a server certificate for 127.0.0.1 signed by it, for the
// HTTPS servers the tests run: the webhook receivers and the test venue.
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from './harness.ts'

export interface TestCa {
  dir: string
  caFile: string
  key: string
  cert: string
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] })
}

/** A CA and a leaf certificate for 127.0.0.1 (P-256 keys: cheap handshakes). */
export function makeTestCa(label = 'ca'): TestCa {
  const dir = tempDir(`bulwark-ca-${label}`)
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', `/CN=Bulwark test ${label}`], dir)
  openssl(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1'], dir)
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
  openssl(
    ['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf'],
    dir,
  )
  return { dir, caFile: join(dir, 'ca.pem'), key: readFileSync(join(dir, 'server.key'), 'utf8'), cert: readFileSync(join(dir, 'server.pem'), 'utf8') }
}
