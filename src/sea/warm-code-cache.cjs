// node warm-code-cache.cjs BUNDLE SCRIPT CACHE ADDON: writes the main bundle as src/sea/sea-main.cjs
// compiles it (a function of CommonJS's five names) to SCRIPT, runs it as `serve` on a fresh data dir
// until its first health answer, then writes its code cache, which now holds every function the start
// and that answer compiled, to CACHE. Run by build.mjs with the executable's own Node and V8 flags,
// which a code cache must match. An entry that serves nothing (build.mjs --entry) is cached at exit.
'use strict'
const { mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { dirname, join } = require('node:path')
const { Script } = require('node:vm')

const [bundle, scriptFile, cacheFile, addon] = process.argv.slice(2)
writeFileSync(scriptFile, `(function (exports, require, module, __filename, __dirname) {${readFileSync(bundle, 'utf8')}\n})`)
const script = new Script(readFileSync(scriptFile, 'utf8'), { filename: scriptFile })
let cached = false
const writeCache = () => {
  if (!cached) writeFileSync(cacheFile, script.createCachedData())
  cached = true
}
process.on('exit', writeCache)
const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-warm-'))
process.on('exit', () => rmSync(dataDir, { recursive: true, force: true }))
process.argv = [process.argv[0], scriptFile, 'serve', '--port', '0', '--data-dir', dataDir]

// The banner names the address; nothing else of the output matters here.
let asked = false
process.stdout.write = (chunk) => {
  const base = /http:\/\/127\.0\.0\.1:\d+/.exec(String(chunk))
  if (base && !asked) {
    asked = true
    setImmediate(async () => {
      const response = await fetch(`${base[0]}/api/v1/health`)
      if (response.status !== 200) throw new Error(`health answered ${response.status}`)
      await response.arrayBuffer()
      writeCache()
      process.kill(process.pid, 'SIGTERM')
    })
  }
  return true
}

// Outside the executable, better-sqlite3 requires its addon by a path of its own package: the same
// prebuilt file the executable carries.
const requireHere = (id) => (String(id).endsWith('better_sqlite3.node') ? require(addon) : require(id))
const module_ = { exports: {} }
script.runInThisContext()(module_.exports, requireHere, module_, scriptFile, dirname(scriptFile))
