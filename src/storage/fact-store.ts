import type { CollectionSpec, FactRecord, FactValue, FactVersion } from '../core/facts/fact-types.js'
import type { FactQuery } from '../core/facts/fact-query.js'
import type { FactQueryResult } from '../core/facts/fact-answer.js'

export type { FactGroup, FactPeriodValue, FactQueryResult } from '../core/facts/fact-answer.js'

/**
 * Whose facts a call reads or writes: one project (by root) and one user (null: no user). Facts are never read
 * across users: a user's reads see that user's records only, not shared ones (docs/FACTS.md).
 */
export interface FactScope {
  projectRoot: string
  user: string | null
}

/** Bounds of one query: it is refused when its collection holds more than `maxRows` records, and stopped past `timeoutMs`. */
export interface FactQueryLimits {
  maxRows: number
  timeoutMs: number
}

/**
 * Which records a listing shows: `current` the live ones, `retracted` those that stopped holding (a retract ended
 * them; history kept), `superseded` the earlier versions of records (every version a newer one replaced).
 */
const FACT_LIST_STATES = ['current', 'retracted', 'superseded'] as const
export type FactListState = (typeof FACT_LIST_STATES)[number]

/** A page of a listing: the state, an optional sort field of the collection (validated by the caller), offset and limit. */
interface FactListOptions {
  state: FactListState
  /** A field of the collection's spec, not a list; absent: record time. */
  sort?: string
  /** Default `asc`. */
  dir?: 'asc' | 'desc'
  offset: number
  limit: number
}

/** A listed record: its version in the listing's state, when it stopped holding, and when a newer version replaced it. */
export interface FactListedRecord extends FactRecord {
  retractedAt?: number
  supersededAt?: number
}

/** The fact ledger's storage: the materialised views of fact events (applied through `Derivation.facts`) and their queries. */
export interface FactStore {
  /** The current spec of each collection of the scope (the union of its declarations), by name. */
  collections(scope: FactScope): Promise<CollectionSpec[]>
  /** Record counts, time ranges and up to `examples` distinct example values per field of each collection. */
  collectionStats(
    scope: FactScope,
    examples: number,
  ): Promise<Map<string, { records: number; from?: string; to?: string; examples: Record<string, FactValue[]> }>>
  /** The live record with this identity (see `identityOf`) in a collection, if any. */
  byIdentity(scope: FactScope, collection: string, identity: string): Promise<FactRecord | undefined>
  /** A live record by id (retracted ones included, with `validTo`), if in scope. */
  get(scope: FactScope, id: string): Promise<(FactRecord & { retractedAt?: number }) | undefined>
  /**
   * A page of a collection's records in one state (see `FactListOptions`), and how many it holds in that state.
   * Sorted by a field (NULLs first ascending, last descending, as SQLite orders them) or by record time; ties by record
   * time, then id (then version).
   */
  list(scope: FactScope, collection: string, options: FactListOptions): Promise<{ records: FactListedRecord[]; total: number }>
  /** A page of a collection's deleted records (tombstones: id and when), latest deleted first, and how many. */
  tombstones(
    scope: FactScope,
    collection: string,
    offset: number,
    limit: number,
  ): Promise<{ tombstones: { id: string; deletedAt: number }[]; total: number }>
  /** Every version of a record, oldest first; empty when unknown or out of scope. */
  history(scope: FactScope, id: string): Promise<FactVersion[]>
  /** When a record of the scope was deleted at a person's request, if it was. */
  tombstone(scope: FactScope, id: string): Promise<{ collection: string; deletedAt: number } | undefined>
  /** The latest deleted record of a collection with this identity, if one was deleted at a person's request. */
  tombstoneByIdentity(scope: FactScope, collection: string, identity: string): Promise<{ id: string; deletedAt: number } | undefined>
  /** Sequence numbers of the events that wrote a record's versions (what a real delete removes from the log). */
  eventSeqs(scope: FactScope, id: string): Promise<number[]>
  /**
   * Runs a query resolved against `spec` (see `resolveQuery`) as parameterised SQL inside the scope.
   * @param now - Epoch ms, for the time limit's clock.
   * @throws {MnemoError} `INVALID_INPUT` (path `query`) — the collection holds more than `limits.maxRows` records, or the query ran past `limits.timeoutMs`.
   */
  query(scope: FactScope, spec: CollectionSpec, query: FactQuery, limits: FactQueryLimits): Promise<FactQueryResult>
  /**
   * Optional, for a network store (one round trip less): `query` for a recorded collection named `name`, its spec read
   * in the query's own transaction and the query resolved against it by `resolve` there.
   * @returns Undefined when the scope records no collection of that name.
   * @throws {MnemoError} what `resolve` throws, and what `query` throws.
   */
  queryByName?(
    scope: FactScope,
    name: string,
    resolve: (spec: CollectionSpec) => FactQuery,
    limits: FactQueryLimits,
  ): Promise<{ spec: CollectionSpec; query: FactQuery; result: FactQueryResult } | undefined>
}
