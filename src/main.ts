// The entry point from source (the executable starts at src/cli/main.ts: it carries its own Node
// 24). It imports nothing until the runtime is checked: the SQLite addon is built for Node 24's ABI,
// and another Node that loads it dies of a segmentation fault with no message. npm's scripts put
// the pinned node@24 first on PATH; a plain shell finds the machine's Node. Exit 1: the command
// line may be fine, the runtime is not.
const major = Number(process.versions.node.split('.')[0])
if (major !== 24) {
  process.stderr.write(
    `bulwark needs Node.js 24 (this is ${process.versions.node}); run it through npm (npm start, npm run serve -- ARGS, npm test), which uses the pinned node@24, or build dist/bulwark with npm run build\n`,
  )
  process.exitCode = 1
} else {
  void import('./cli/main.ts')
}

export {}
