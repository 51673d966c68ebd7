// Files that travel with the program (sql/ migrations, the public page, the console and the uPlot
// files it serves). From source they are read from the repository; build.mjs inlines them into the
// bundle as BULWARK_EMBEDDED, a map from the path relative to the repository root
// ("sql/001_init.sql") to the file's text.
import { type Dirent, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

declare const BULWARK_EMBEDDED: Record<string, string> | undefined

const embedded: Record<string, string> | undefined = typeof BULWARK_EMBEDDED === 'undefined' ? undefined : BULWARK_EMBEDDED
const root = embedded ? '' : join(fileURLToPath(new URL('.', import.meta.url)), '..', '..')

/** Text of a shipped file, by its path from the repository root ("sql/001_init.sql"). */
export function assetText(path: string): string {
  if (embedded) {
    const text = embedded[path]
    if (text === undefined) throw new Error(`asset ${path} is not in the executable`)
    return text
  }
  return readFileSync(join(root, path), 'utf8')
}

/**
 * Files under one folder ("sql", "src/signals/public"), as paths relative to it ("001_init.sql",
 * "css/site.css"), sorted. Both sources answer alike, nested files included and folders left out,
 * and a folder that is absent gives [] (the executable cannot tell absent from empty).
 */
export function assetList(dir: string): string[] {
  const prefix = `${dir.replace(/\/+$/, '')}/`
  if (embedded) {
    return Object.keys(embedded)
      .filter((p) => p.startsWith(prefix))
      .map((p) => p.slice(prefix.length))
      .sort()
  }
  let entries: Dirent[]
  try {
    entries = readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  const base = join(root, dir)
  return entries
    .filter((e) => e.isFile())
    .map((e) =>
      join(e.parentPath, e.name)
        .slice(base.length + 1)
        .split('\\')
        .join('/'),
    )
    .sort()
}
