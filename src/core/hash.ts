/**
 * 64-bit FNV-1a over the UTF-16 code units of `text`, as 16 hex digits.
 * Used for deterministic ids and content-hash idempotency keys; not a
 * cryptographic hash. Constants from the FNV reference
 * (http://www.isthe.com/chongo/tech/comp/fnv/): offset basis
 * 0xcbf29ce484222325, prime 0x100000001b3.
 */
export function fnv1a64(text: string): string {
  let h = 0xcbf29ce484222325n
  const prime = 0x100000001b3n
  const mask = 0xffffffffffffffffn
  for (let i = 0; i < text.length; i++) {
    h ^= BigInt(text.charCodeAt(i))
    h = (h * prime) & mask
  }
  return h.toString(16).padStart(16, '0')
}

/** JSON with object keys sorted at every depth, so equal values hash equally. */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`
  const entries = Object.keys(value as Record<string, unknown>)
    .sort()
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${stableStringify((value as Record<string, unknown>)[k])}`)
  return `{${entries.join(',')}}`
}
