// pg's optional libpq binding, which pg requires only when something reads pg.native: the bundle
// uses the pure-JS client, and a require of it fails as on an install without it (pg.native is null).
export const withoutPgNative = {
  name: 'without-pg-native',
  setup(build) {
    build.onResolve({ filter: /^pg-native$/ }, () => ({ path: 'pg-native', namespace: 'absent' }))
    build.onLoad({ filter: /.*/, namespace: 'absent' }, () => ({
      contents: 'throw Object.assign(new Error("Cannot find module \'pg-native\'"), { code: "MODULE_NOT_FOUND" })',
      loader: 'js',
    }))
  },
}
