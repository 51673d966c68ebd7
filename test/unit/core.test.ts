// Pure pieces of the core: key format and checksum, canonical JSON, ids, the schema validator.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { crc32 } from 'node:zlib'
import { generateKey, looksLikeKey } from '../../src/auth/api-keys.ts'
import { canonicalJson } from '../../src/shared/canonical-json.ts'
import { isId, newId } from '../../src/store/ids.ts'
import { validate } from '../../src/http/schema.ts'
import type { DomainError } from '../../src/shared/errors.ts'
import { VERSION } from '../../src/version.ts'
import { readFileSync } from 'node:fs'

const test = suite('unit: core')

test('API keys: sk_live_ + 32 base62 + the base62 CRC32 of what precedes it', () => {
  const key = generateKey()
  assert.match(key, /^sk_live_[0-9A-Za-z]{38}$/)
  // Independent base62 of the CRC32.
  let n = crc32(key.slice(0, 40))
  let check = ''
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
  for (let i = 0; i < 6; i++) {
    check = alphabet[n % 62] + check
    n = Math.floor(n / 62)
  }
  assert.is(key.slice(40), check)
  assert.ok(looksLikeKey(key))
  const typo = key.slice(0, 20) + (key[20] === 'a' ? 'b' : 'a') + key.slice(21)
  assert.not.ok(looksLikeKey(typo))
  assert.is.not(generateKey(), key)
})

test('canonical JSON sorts keys at every level and drops whitespace', () => {
  assert.is(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'é' }, n: null }), '{"a":{"c":"é","d":[3,{"y":2,"z":1}]},"b":1,"n":null}')
  assert.is(canonicalJson(1.5e-7), '1.5e-7')
  assert.throws(() => canonicalJson({ x: Infinity }))
})

test('ids: prefix, shape, and creation order within a millisecond', () => {
  const ids = Array.from({ length: 1000 }, () => newId('sig'))
  assert.equal([...ids].sort(), ids)
  assert.is(new Set(ids).size, 1000)
  assert.ok(ids.every((id) => isId('sig', id)))
  assert.not.ok(isId('tok', ids[0]))
})

test('schema: types, ranges, unknown fields', () => {
  const schema = {
    type: 'object',
    required: ['n'],
    additionalProperties: false,
    properties: { n: { type: 'integer', minimum: 1 }, s: { type: 'string', maxLength: 3 } },
  } as const
  assert.equal(validate({ n: 2, s: 'abc' }, schema), { n: 2, s: 'abc' })
  const codeOf = (value: unknown) => {
    try {
      validate(value, schema)
      return 'ok'
    } catch (e) {
      return (e as DomainError).code
    }
  }
  assert.is(codeOf({ n: 0 }), 'validation_failed')
  assert.is(codeOf({ n: 1.5 }), 'validation_failed')
  assert.is(codeOf({ n: 2 ** 64 }), 'validation_failed')
  assert.is(codeOf({ n: 1, s: 'abcd' }), 'validation_failed')
  assert.is(codeOf({ n: 1, extra: true }), 'unknown_field')
  assert.is(codeOf(JSON.parse('{"n":1,"__proto__":{"x":1}}')), 'unknown_field')
  assert.is(codeOf(null), 'validation_failed')
})

test('the service version equals package.json', () => {
  assert.is(VERSION, JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version)
})

test.run()
