// The executable's entry point (its SEA main, see build.mjs): runs the main bundle, the SEA asset
// "bulwark.js", compiled with "bulwark.cache", the code cache of a run of that bundle to serve's
// first answer (src/sea/warm-code-cache.cjs). SEA's own code cache holds only what a script compiles
// before it runs: every function a start calls was compiled anew at every start, ~5 ms of serve's
// first answer. The bundle gets the five names SEA itself would have given it.
'use strict'
const { getAsset, getRawAsset } = require('node:sea')
const { Script } = require('node:vm')

const script = new Script(getAsset('bulwark.js', 'utf8'), { filename: __filename, cachedData: new Uint8Array(getRawAsset('bulwark.cache')) })
// A rejected cache (another Node, other V8 flags) costs time only; build.mjs's smoke test asks.
if (script.cachedDataRejected && process.env.BULWARK_CODE_CACHE_CHECK) throw new Error('the code cache was rejected')
script.runInThisContext()(exports, require, module, __filename, __dirname)
