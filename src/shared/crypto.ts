// node:crypto, loaded at its first use: loading it costs every start ~4 ms (more than any module of
// ours), and the first answers of a restart need none of it (request ids come from src/store/ids.ts).
export const nodeCrypto = () => process.getBuiltinModule('node:crypto')
