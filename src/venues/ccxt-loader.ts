// Where ccxt comes from. From source it is the package in node_modules. Inside the executable the
// main bundle leaves it out (it is two thirds of the code and most starts never need it: parsing it
// at every start would cost more than the rest of Bulwark); build.mjs ships it minified as the SEA
// asset "ccxt.cjs", compiled here at the first use of an exchange.
import type Module from 'node:module'

type Ccxt = typeof import('ccxt')

let loaded: Promise<Ccxt> | undefined

/**
 * ccxt's module, loaded once.
 *
 * @example
 * const ccxt = await loadCcxt()
 * new ccxt.binance({ ... })
 */
export function loadCcxt(): Promise<Ccxt> {
  loaded ??= load()
  return loaded
}

async function load(): Promise<Ccxt> {
  const sea = process.getBuiltinModule('node:sea')
  if (!sea.isSea()) return import('ccxt')
  const filename = '/bulwark/ccxt.cjs' // a name for stack traces; nothing is read from it
  // node:module here, not imported: only a start that reaches an exchange needs it.
  const module = new (process.getBuiltinModule('node:module').Module)(filename) as Module & {
    _compile(code: string, filename: string): void
    filename: string
    paths: string[]
  }
  module.filename = filename
  module.paths = []
  module._compile(sea.getAsset('ccxt.cjs', 'utf8'), filename)
  return module.exports as Ccxt
}
