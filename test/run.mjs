// The README's test command: uvu over test/ (TypeScript through tsx), then one line
// "N passed, N failed" that CI reads. Exit code is non-zero when anything failed.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const pattern = process.argv[2] ?? '\\.test\\.ts$'
const child = spawn(process.execPath, ['--import', 'tsx', 'node_modules/uvu/bin.js', 'test', pattern, '--no-color'], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, FORCE_COLOR: '0' },
})
let out = ''
child.stdout.on('data', (chunk) => {
  out += chunk
  process.stdout.write(chunk)
})
child.on('close', (code) => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strips ANSI colour codes (ESC [ ... m)
  const plain = out.replace(/\x1b\[[0-9;]*m/g, '')
  const total = Number(/Total:\s+(\d+)/.exec(plain)?.[1] ?? 0)
  const passed = Number(/Passed:\s+(\d+)/.exec(plain)?.[1] ?? 0)
  const skipped = Number(/Skipped:\s+(\d+)/.exec(plain)?.[1] ?? 0)
  let failed = total - passed - skipped
  if (code !== 0 && failed === 0) failed = 1 // a crash before the summary still fails the run
  console.log(`${passed} passed, ${failed} failed`)
  process.exit(code === 0 && failed === 0 ? 0 : 1)
})
