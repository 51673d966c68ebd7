// The files that travel inside the main bundle as BULWARK_EMBEDDED (read by src/store/assets.ts):
// sql/, the public page's and the console's folders, and uPlot's two files as npm ships them.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'

const EMBEDDED_DIRS = ['sql', 'src/signals/public', 'src/console/public']
// Single files embedded beside those folders: uPlot as npm ships it, served by src/console/routes.ts (UPLOT_FILES).
const EMBEDDED_FILES = ['node_modules/uplot/dist/uPlot.iife.min.js', 'node_modules/uplot/dist/uPlot.min.css']

/**
 * Every file of the embedded folders and the single files, by repository-relative path (absent
 * folders add nothing), as a JavaScript object literal. Throws with a one-line reason.
 */
export function embeddedLiteral(root) {
  const files = {}
  const utf8 = new TextDecoder('utf-8', { fatal: true })
  const paths = [...EMBEDDED_FILES]
  for (const file of EMBEDDED_FILES) if (!existsSync(join(root, file))) throw new Error(`${file} is missing (npm install)`)
  for (const dir of EMBEDDED_DIRS) {
    const abs = join(root, dir)
    if (!existsSync(abs)) continue
    for (const entry of readdirSync(abs, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) paths.push(relative(root, join(entry.parentPath, entry.name)).split(sep).join('/'))
    }
  }
  for (const path of paths) {
    try {
      files[path] = utf8.decode(readFileSync(join(root, path)))
    } catch {
      throw new Error(`${path} is not UTF-8 text; only text files can be embedded`)
    }
  }
  const sorted = Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : 1)))
  // Every non-ASCII character escaped: an all-ASCII bundle is a one-byte string to V8, half the memory.
  return JSON.stringify(sorted).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
