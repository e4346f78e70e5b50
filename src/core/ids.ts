import { fnv1a64 } from './hash.js'

declare const idBrand: unique symbol
type Branded<T extends string> = string & { readonly [idBrand]: T }

export type ObservationId = Branded<'obs'>
export type MemoryId = Branded<'mem'>
export type SessionId = Branded<'ses'>
export type ProjectId = Branded<'prj'>

/**
 * A project id no project has: a read scoped to it (`recall({ projectIds: [NO_PROJECT_YET] })`) finds only the
 * reader's memories that apply in every project (`withUserProject` adds their project), where an empty list would mean
 * every project. What the CLI and MCP search for a working directory with nothing captured yet.
 */
export const NO_PROJECT_YET = 'prj_none' as ProjectId

type IdPrefix = 'obs' | 'mem' | 'ses' | 'prj' | 'fct'

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz'

/** Encodes a non-negative integer below 2^50 as 10 Crockford base32 digits (sortable). */
function encodeTime(ms: number): string {
  let n = Math.max(0, Math.floor(ms))
  let out = ''
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[n % 32] + out
    n = Math.floor(n / 32)
  }
  return out
}

/**
 * Builds a prefixed, time-sortable, deterministic id: `<prefix>_<10 base32 time digits><12 hex>`.
 * The same `(timeMs, seed)` always gives the same id, so `mnemo rebuild`
 * re-derives identical ids from the event log.
 *
 * @param prefix - Kind of thing named (`obs`, `mem`, `ses`, `prj`).
 * @param timeMs - Epoch ms the thing happened; orders ids by time.
 * @param seed - Any string unique to the thing (an idempotency key, a path).
 */
export function makeId<P extends IdPrefix>(prefix: P, timeMs: number, seed: string): Branded<P> {
  return `${prefix}_${encodeTime(timeMs)}${fnv1a64(seed).slice(0, 12)}` as Branded<P>
}

const ID_PATTERN = /^(obs|mem|ses|prj|fct)_[0-9a-z]{10}[0-9a-f]{12}$/

/** The prefix of a well-formed mnemo id, or `undefined` for anything else. */
export function idPrefix(value: string): IdPrefix | undefined {
  const m = ID_PATTERN.exec(value)
  return m ? (m[1] as IdPrefix) : undefined
}
