import { factEvent } from '../capture/fact-events.js'
import { ACTIVITY_SPECS } from '../core/facts/activity.js'
import type { FactQueryResult } from '../core/facts/fact-answer.js'
import { parseFactQuery } from '../core/facts/fact-query.js'
import { resolveQuery } from '../core/facts/fact-resolve.js'
import type { CollectionSpec, FactOp, FactProvenance, FactStatus, FactValues } from '../core/facts/fact-types.js'
import { checkValues, identityOf, inferFields, inferSpec, mergeSpecs, renameExternalId } from '../core/facts/fact-values.js'
import { stableStringify } from '../core/hash.js'
import { makeId } from '../core/ids.js'
import type { EventInput } from '../core/types.js'
import type { FactQueryLimits, FactScope, FactStore } from '../storage/fact-store.js'
import { PgDb } from '../storage/postgres/pg-db.js'
import { PG_FACT_PART } from '../storage/postgres/pg-facts.js'
import { openPostgresStoreWith, type PgParts } from '../storage/postgres/pg-store.js'
import { openSqliteStore } from '../storage/sqlite/sqlite-store.js'
import type { Derivation, Store } from '../storage/store.js'

/** The project every write of `FactDialects` goes to. */
export const FACT_TEST_PROJECT = { root: '/work/demo-app', name: 'demo-app' }

/** Generous limits for comparing answers (no refusal). */
export const WIDE_LIMITS: FactQueryLimits = { maxRows: 1_000_000, timeoutMs: 60_000 }

/** The PostgreSQL store's parts for fact tests: the fact ledger, and no search channels (a call to one fails the test). */
export const FACT_PARTS: PgParts = {
  migrations: PG_FACT_PART.migrations,
  write: { docColumns: [], facts: PG_FACT_PART.writes },
  channels: () =>
    new Proxy({} as ReturnType<PgParts['channels']>, {
      get: (_, name) => () => Promise.reject(new Error(`the search channels are not under test here (${String(name)})`)),
    }),
  facts: PG_FACT_PART.facts,
}

/**
 * One fact ledger on both dialects: an in-memory SQLite store and a PostgreSQL store (with the fact part) on a fresh
 * database, each write one logged event appended to both, which apply it through their own write paths; a record's
 * delete removes its events from both logs. For tests of the PostgreSQL fact modules against SQLite's answers.
 */
export class FactDialects {
  /** Whose facts writes and queries are: the test project, no user unless a test sets one. */
  scope: FactScope = { projectRoot: FACT_TEST_PROJECT.root, user: null }

  private constructor(
    readonly sqlite: Store,
    readonly postgres: Store,
    /** A pool of its own on the PostgreSQL database, for a test's own statements. */
    readonly pg: PgDb,
    private readonly clock: { now: number },
  ) {}

  /** Opens both, at epoch ms `start`, on a fresh PostgreSQL database (`url`). */
  static async open(url: string, start: number): Promise<FactDialects> {
    const clock = { now: start }
    const postgres = await openPostgresStoreWith(url, FACT_PARTS, { now: () => clock.now })
    return new FactDialects(
      openSqliteStore({ path: ':memory:' }, () => clock.now),
      postgres,
      PgDb.open(url),
      clock,
    )
  }

  /** The PostgreSQL store's FactStore. */
  get pgFacts(): FactStore {
    return this.postgres.facts
  }

  /** Moves the clock of both on by `ms`. */
  tick(ms: number): void {
    this.clock.now += ms
  }

  private get now(): number {
    return this.clock.now
  }

  async close(): Promise<void> {
    await this.sqlite.close()
    await this.postgres.close()
    await this.pg.close()
  }

  /**
   * Appends one batch to both stores (each derives it through its write path).
   * @throws {Error} when the two logs give the events other sequence numbers.
   */
  async append(batch: { event: EventInput; derive: () => Derivation }[]): Promise<number[]> {
    const a = await this.sqlite.append(batch)
    const b = await this.postgres.append(batch)
    if (JSON.stringify(a) !== JSON.stringify(b))
      throw new Error(`the dialects appended differently: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`)
    return a.seqs.map((s) => s ?? 0)
  }

  /** Appends fact operations as events (one each, at the current time, for the scope's user) to both. */
  write(ops: readonly FactOp[]): Promise<number[]> {
    const user = this.scope.user ?? undefined
    return this.append(
      ops.map((op) => ({ event: factEvent(FACT_TEST_PROJECT, op, this.now, user), derive: () => ({ observations: [], facts: [op] }) })),
    )
  }

  /**
   * Records raw records (a record's `id` becomes `external_id`) as the engine's add does: a collection inferred from
   * them when it is new, values checked, an identity that matches a stored record updating it.
   * @returns The record ids, in input order.
   */
  async add(
    collection: string,
    raws: readonly Record<string, unknown>[],
    options: { coerce?: boolean; status?: FactStatus; provenance?: FactProvenance } = {},
  ): Promise<string[]> {
    const clean = raws.map(renameExternalId)
    const had = (await this.pgFacts.collections(this.scope)).find((c) => c.name === collection)
    let spec: CollectionSpec = had ?? inferSpec(collection, clean, options.coerce ?? false)
    const ops: FactOp[] = had ? [] : [{ op: 'fact', action: 'declare', collection: spec }]
    // Fields a declared collection lacks are inferred and declared (additive).
    const missing = had
      ? clean.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !had.fields.some((f) => f.name === k))))
      : []
    if (had && missing.some((m) => Object.keys(m).length > 0)) {
      const more: CollectionSpec = { name: collection, fields: inferFields(missing, options.coerce ?? false), identity: [] }
      spec = mergeSpecs(had, more)
      ops.push({ op: 'fact', action: 'declare', collection: more })
    }
    const ids: string[] = []
    for (const [i, raw] of clean.entries()) {
      const values: FactValues = checkValues(spec, raw, `${collection} record ${i + 1}`, options.coerce ?? false)
      const identity = identityOf(spec, values)
      const stored = identity !== undefined ? await this.pgFacts.byIdentity(this.scope, collection, identity) : undefined
      const id =
        stored?.id ?? makeId('fct', this.now, `${collection}\u0000${identity ?? `${this.now}\u0000${i}\u0000${stableStringify(values)}`}`)
      ids.push(id)
      ops.push({
        op: 'fact',
        action: 'assert',
        collection,
        id,
        values,
        ...(identity !== undefined ? { identity } : {}),
        status: options.status ?? 'done',
        provenance: options.provenance ?? { source: 'user' },
      })
    }
    await this.write(ops)
    return ids
  }

  /** Deletes a record for real on both: a delete event, then its versions' events leave the log. */
  async delete(id: string): Promise<void> {
    const record = await this.pgFacts.get(this.scope, id)
    if (record === undefined) throw new Error(`no record ${id}`)
    const seqs = await this.sqlite.facts.eventSeqs(this.scope, id)
    const pgSeqs = await this.pgFacts.eventSeqs(this.scope, id)
    if (JSON.stringify(seqs) !== JSON.stringify(pgSeqs)) throw new Error(`event seqs differ: ${seqs} vs ${pgSeqs}`)
    await this.write([
      { op: 'fact', action: 'delete', collection: record.collection, id, ...(record.identity ? { identity: record.identity } : {}) },
    ])
    const a = await this.sqlite.deleteEvents({ seqs })
    const b = await this.postgres.deleteEvents({ seqs })
    if (a !== b) throw new Error(`the dialects deleted ${a} and ${b} events`)
  }

  /** A query's text parsed and resolved against the collection's spec (as SQLite stores it). */
  async resolve(text: string): Promise<{ spec: CollectionSpec; query: ReturnType<typeof parseFactQuery> }> {
    const parsed = parseFactQuery(text)
    const spec =
      ACTIVITY_SPECS.find((c) => c.name === parsed.collection) ??
      (await this.sqlite.facts.collections(this.scope)).find((c) => c.name === parsed.collection)
    if (spec === undefined) throw new Error(`no collection ${parsed.collection}`)
    return { spec, query: resolveQuery(parsed, spec) }
  }

  /** Runs one query on both dialects. */
  async query(text: string, limits: FactQueryLimits = WIDE_LIMITS): Promise<{ sqlite: FactQueryResult; pg: FactQueryResult }> {
    const { spec, query } = await this.resolve(text)
    const sqlite = await this.sqlite.facts.query(this.scope, spec, query, limits)
    const pg = await this.pgFacts.query(this.scope, spec, query, limits)
    return { sqlite, pg }
  }
}

/** A result without its SQL, for comparing dialects (the SQL differs by design). */
export function withoutSql(r: FactQueryResult): Omit<FactQueryResult, 'sql'> {
  const { sql: _sql, ...rest } = r
  return rest
}

/**
 * Where two values differ, as a path (`value[2].cost_usd`), or undefined when equal: numbers equal within a relative
 * 1e-12 (PostgreSQL sums exactly, then rounds; SQLite sums doubles with compensation), objects with their keys in the
 * same order.
 */
export function difference(a: unknown, b: unknown, path = ''): string | undefined {
  if (typeof a === 'number' && typeof b === 'number') {
    const scale = Math.max(Math.abs(a), Math.abs(b), 1)
    return Math.abs(a - b) <= 1e-12 * scale ? undefined : `${path}: ${a} vs ${b}`
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return `${path}: length ${a.length} vs ${b.length}`
    for (let i = 0; i < a.length; i++) {
      const d = difference(a[i], b[i], `${path}[${i}]`)
      if (d !== undefined) return d
    }
    return undefined
  }
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a)
    const kb = Object.keys(b)
    if (ka.join(',') !== kb.join(',')) return `${path}: keys ${ka.join(',')} vs ${kb.join(',')}`
    for (const k of ka) {
      const d = difference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`)
      if (d !== undefined) return d
    }
    return undefined
  }
  return Object.is(a, b) ? undefined : `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`
}
