// The README and the pages under docs/ link each other: every relative link of every markdown file
// (README.md and docs/*.md) must resolve to a file that exists, and a link's #anchor to a heading of
// the file it names, spelled as GitHub spells heading ids. The README stays a guide: at most 600 lines.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const test = suite('structure: docs links')
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const README_MAX_LINES = 600

/** README.md and every .md file directly under docs/. */
function markdownFiles(): string[] {
  const docs = join(ROOT, 'docs')
  const pages = existsSync(docs) ? readdirSync(docs).filter((name) => name.endsWith('.md')) : []
  return [join(ROOT, 'README.md'), ...pages.sort().map((name) => join(docs, name))]
}

/** The text without fenced code blocks (``` or ~~~), whose lines are blanked so line numbers stay. */
function withoutFences(text: string): string[] {
  let fence: string | undefined
  return text.split('\n').map((line) => {
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line)
    if (fence === undefined) {
      if (open) {
        fence = open[1]
        return ''
      }
      return line
    }
    if (open && open[1]![0] === fence[0] && open[1]!.length >= fence.length && line.trim() === open[1]) fence = undefined
    return ''
  })
}

/** A line without its inline code spans (a link inside backticks is text, not a link). */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, (span) => ' '.repeat(span.length))
}

/** GitHub's id of a heading: lowercase, markup and punctuation dropped, each space a hyphen. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // inline HTML tags
    .replace(/[`*~]/g, '') // emphasis and code markers (GitHub keeps _)
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')
}

/** Every heading id of a markdown file, with GitHub's -1, -2 ... for repeated headings. */
function anchorsOf(file: string): Set<string> {
  const ids = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of withoutFences(readFileSync(file, 'utf8'))) {
    const heading = /^ {0,3}#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$/.exec(line)
    if (!heading) continue
    const base = slug(heading[1]!)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    ids.add(count === 0 ? base : `${base}-${count}`)
  }
  return ids
}

interface Link {
  line: number
  target: string
}

/** Inline links and images `[text](target "title")`, `<target>` forms, and reference definitions. */
function linksOf(text: string): Link[] {
  const links: Link[] = []
  withoutFences(text).forEach((raw, index) => {
    const line = withoutCodeSpans(raw)
    for (const m of line.matchAll(/\]\(\s*(<[^>]*>|[^\s)]*)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g)) {
      links.push({ line: index + 1, target: m[1]!.replace(/^<|>$/g, '') })
    }
    const definition = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(line)
    if (definition) links.push({ line: index + 1, target: definition[1]!.replace(/^<|>$/g, '') })
  })
  return links
}

/** What is wrong with one link of `file`, or undefined when it resolves. */
function problem(file: string, target: string): string | undefined {
  if (target === '') return 'empty link'
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return undefined // absolute URL
  const hashAt = target.indexOf('#')
  const pathPart = decodeURIComponent(hashAt === -1 ? target : target.slice(0, hashAt)).replace(/\?.*$/, '')
  const anchor = hashAt === -1 ? undefined : decodeURIComponent(target.slice(hashAt + 1))
  const resolved = pathPart === '' ? file : resolve(dirname(file), pathPart)
  if (relative(ROOT, resolved).startsWith('..')) return `points outside the repository: ${resolved}`
  if (!existsSync(resolved)) return `no such file: ${relative(ROOT, resolved)}`
  if (anchor === undefined) return undefined
  if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) return `an anchor on a file that is not markdown: ${relative(ROOT, resolved)}`
  if (!anchorsOf(resolved).has(anchor)) return `no heading #${anchor} in ${relative(ROOT, resolved)}`
  return undefined
}

test('every markdown file is found: README.md and the pages under docs/', () => {
  const files = markdownFiles()
  assert.ok(existsSync(files[0]!), 'README.md exists')
  assert.ok(files.length > 1, 'docs/ holds the reference pages')
})

test('every relative link of README.md and docs/*.md resolves, #anchors to a heading', () => {
  const broken: string[] = []
  let checked = 0
  for (const file of markdownFiles()) {
    for (const link of linksOf(readFileSync(file, 'utf8'))) {
      checked++
      const wrong = problem(file, link.target)
      if (wrong) broken.push(`${relative(ROOT, file)}:${link.line}: (${link.target}) ${wrong}`)
    }
  }
  assert.ok(checked > 50, `links were found (${checked})`)
  assert.equal(broken, [], broken.join('\n'))
})

test('every docs page is linked from the README', () => {
  const readme = join(ROOT, 'README.md')
  const linked = new Set(linksOf(readFileSync(readme, 'utf8')).map((l) => resolve(ROOT, l.target.replace(/#.*$/, ''))))
  const missing = markdownFiles()
    .slice(1)
    .filter((page) => !linked.has(page))
  assert.equal(
    missing.map((page) => relative(ROOT, page)),
    [],
    'pages the README does not link',
  )
})

test(`README.md is a guide of at most ${README_MAX_LINES} lines`, () => {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').replace(/\n$/, '').split('\n').length
  assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines; move reference material to docs/`)
})

test('the checker itself: slugs as GitHub makes them, a broken link and a missing anchor are caught', () => {
  assert.is(slug("Dead man's switch"), 'dead-mans-switch')
  assert.is(slug('`serve --demo`'), 'serve---demo')
  assert.is(slug('How 10,000 cancellations stay cheap'), 'how-10000-cancellations-stay-cheap')
  assert.is(slug('Track record and backtests (SPEC §11)'), 'track-record-and-backtests-spec-11')
  assert.is(slug('Anchoring: keep a head outside the data dir'), 'anchoring-keep-a-head-outside-the-data-dir')
  const links = linksOf('See [a](docs/nope.md) and `[b](docs/code.md)`.\n```\n[c](docs/fenced.md)\n```\n[d]: docs/risk.md#kill-switch\n')
  assert.equal(
    links.map((l) => l.target),
    ['docs/nope.md', 'docs/risk.md#kill-switch'],
  )
  const readme = join(ROOT, 'README.md')
  assert.ok(problem(readme, 'docs/nope.md')?.startsWith('no such file'))
  assert.ok(problem(readme, 'docs/risk.md#no-such-heading')?.startsWith('no heading'))
  assert.is(problem(readme, 'docs/risk.md#kill-switch'), undefined)
  assert.is(problem(readme, 'https://litestream.io'), undefined)
})

test.run()
