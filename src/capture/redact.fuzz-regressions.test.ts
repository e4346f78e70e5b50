import { describe, expect, it } from 'vitest'
import { redactSecrets, redactValue } from './redact.js'

// Counterexamples found by `node scripts/fuzz.mjs` (targets redact and redact-value), kept as unit tests.
// Fake credentials are assembled at run time so no scanner mistakes this file for a leak.
const cat = (...parts: string[]): string => parts.join('')
const AWS_ID = cat('AKIA', 'IOSFODNN7EXAMPLE')
const PEM = cat(
  '-----BEGIN ',
  'RSA PRIVATE KEY-----\n',
  'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7',
  '\n-----END ',
  'RSA PRIVATE KEY-----',
)

describe('redactSecrets: fuzz regressions', () => {
  it('redacts a key that follows a PEM block directly, in one call (idempotent)', () => {
    // Before the fix the first pass left the key (it followed "-----", a word edge) and a second pass took it.
    const once = redactSecrets(`${PEM}${AWS_ID}`)
    expect(once).toBe('[REDACTED:private-key][REDACTED:aws-access-key]')
    expect(redactSecrets(once)).toBe(once)
  })

  it('leaves a key glued to a longer word alone, as before (only a redacted neighbour changes that)', () => {
    expect(redactSecrets(`build-${AWS_ID}`)).toBe(`build-${AWS_ID}`)
  })
})

describe('redactValue: fuzz regressions', () => {
  it('keeps a "__proto__" key as a key (JSON.parse makes it an own property)', () => {
    const input = JSON.parse('{"password":{"__proto__":""}}') as unknown
    const out = redactValue(input) as { password: object }
    // Before the fix the assignment set the prototype and the key vanished: {"password":{}}.
    expect(Object.keys(out.password)).toEqual(['__proto__'])
    expect(JSON.stringify(out)).toBe('{"password":{"__proto__":""}}')
  })

  it('redacts inside a "__proto__" object and keeps it out of the prototype chain', () => {
    const input = JSON.parse('{"__proto__":{"token":"t0k3n-value-9","note":"kept"}}') as unknown
    const out = redactValue(input) as Record<string, unknown>
    expect(JSON.stringify(out)).toBe('{"__proto__":{"token":"[REDACTED:token]","note":"kept"}}')
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype)
  })

  it('is idempotent on a PEM block followed by a key inside a nested value', () => {
    const input = { lorem: { a: `${PEM}${AWS_ID}` } }
    const out = redactValue(input)
    expect(out).toEqual({ lorem: { a: '[REDACTED:private-key][REDACTED:aws-access-key]' } })
    expect(redactValue(out)).toEqual(out)
  })
})
