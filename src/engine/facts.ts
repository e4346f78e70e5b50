import { readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { invalidInput, MnemoError } from '../core/errors.js'
import { stableStringify } from '../core/hash.js'
import { makeId } from '../core/ids.js'
import type { ProjectRef } from '../core/types.js'
import { ACTIVITY_SPECS, isActivityCollection } from '../core/facts/activity.js'
import { parseCsv } from '../core/facts/csv.js'
import { toFactAnswer, type FactAnswer } from '../core/facts/fact-answer.js'
import { parseFactQuery, type FactQuery } from '../core/facts/fact-query.js'
import type { CalendarClock } from '../core/facts/fact-periods.js'
import { resolveQuery } from '../core/facts/fact-resolve.js'
import {
  FACT_STATUSES,
  type CollectionInfo,
  type CollectionSpec,
  type FactOp,
  type FactProvenance,
  type FactRecord,
  type FactStatus,
  type FactValues,
  type FactVersion,
} from '../core/facts/fact-types.js'
import {
  checkName,
  checkSpec,
  checkValues,
  identityOf,
  inferFields,
  inferSpec,
  mergeSpecs,
  renameExternalId,
} from '../core/facts/fact-values.js'
import { factEvent } from '../capture/fact-events.js'
import { resolveProjectRoot } from '../capture/project.js'
import { sanitizePayload } from '../capture/sanitize.js'
import { zonedDate, zonedMidnight } from '../retrieval/time-expressions.js'
import type { FactListedRecord, FactListState, FactQueryLimits, FactScope } from '../storage/fact-store.js'
import type { EngineContext } from './engine-context.js'
import { FactDependencies } from './fact-dependencies.js'

/** Default bounds of a query: collections above 200,000 records are refused; a query running past 2 s is stopped. */
export const DEFAULT_FACT_LIMITS: FactQueryLimits = { maxRows: 200_000, timeoutMs: 2000 }
/** Most records one add or import writes. */
const MAX_FACT_BATCH = 50_000
/** Largest file `importFacts` reads, bytes (64 MiB). */
const MAX_FACT_FILE_BYTES = 64 * 1024 * 1024

/**
 * The calendar of epoch ms `ms` in IANA time zone `timeZone`: today's date there, and the instant each local day
 * starts (DST-aware, `zonedMidnight`), for a query's calendar periods (`this week`, `past 7 days`).
 */
export function calendarClock(ms: number, timeZone: string): CalendarClock {
  const d = zonedDate(ms, timeZone)
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0')
  return {
    today: `${pad(d.y, 4)}-${pad(d.m)}-${pad(d.d)}`,
    dayStart: (date) =>
      new Date(
        zonedMidnight({ y: Number(date.slice(0, 4)), m: Number(date.slice(5, 7)), d: Number(date.slice(8, 10)) }, timeZone),
      ).toISOString(),
  }
}

/** Options of writes: where, with what status and provenance. */
export interface FactWriteOptions {
  /** The project it belongs to. Default: the engine's working directory's project. */
  project?: ProjectRef
  /** Default `done`. */
  status?: FactStatus
  /** World time the fact holds from / until, epoch ms. */
  validFrom?: number
  validTo?: number
  /** Default `{ source: 'user' }`. */
  provenance?: FactProvenance
}

/** What one add or import did, per record in input order. */
export interface FactWriteResult {
  collection: CollectionSpec
  /** True when the collection was declared or gained fields by this write. */
  schemaChanged: boolean
  records: { id: string; outcome: 'created' | 'updated' | 'unchanged' }[]
}

/** A page of a listing: records (current, retracted or superseded versions), or tombstones (`deleted`), and how many there are. */
interface FactListResult {
  records: FactListedRecord[]
  /** Each with `text`: "you asked me to forget that on <day>". */
  deleted: { id: string; deletedAt: number; text: string }[]
  total: number
}

/** A record with its history, or what is left of a deleted one. */
export type FactShowResult =
  | { record: FactRecord & { retractedAt?: number }; history: FactVersion[] }
  | { deleted: { id: string; collection: string; deletedAt: number; text: string } }

/**
 * The fact ledger's use cases (docs/FACTS.md): declaring collections, recording, updating, retracting and deleting
 * records, imports, the schema listing and queries. Every write is a logged event (`factEvent`), checked first, so a
 * refused write stores nothing, and `rebuild` and export/import carry facts with the rest of the log. Scoped to one
 * project and the engine's user; never across users.
 */
export class EngineFacts {
  /** Dependent facts: entity-attribute state with rules propagated at write time (engine/fact-dependencies.ts). */
  readonly dependencies: FactDependencies

  constructor(private readonly ctx: EngineContext) {
    this.dependencies = new FactDependencies(this, () => ctx.clock.now())
  }

  /** A collection's spec (an activity collection's, or a declared one's), or undefined. */
  collection(name: string, options: { project?: ProjectRef } = {}): Promise<CollectionSpec | undefined> {
    return this.spec(this.scope(options.project).scope, name)
  }

  /**
   * The record of a collection that had these identity values and was deleted at a person's request, with when.
   * Undefined when none was, or the collection has no identity key.
   */
  async deletedByIdentity(
    collection: string,
    values: FactValues,
    options: { project?: ProjectRef } = {},
  ): Promise<{ id: string; deletedAt: number } | undefined> {
    const { scope } = this.scope(options.project)
    const spec = await this.spec(scope, collection)
    const identity = spec ? identityOf(spec, fill(spec, values)) : undefined
    return identity === undefined ? undefined : await this.ctx.store.facts.tombstoneByIdentity(scope, collection, identity)
  }

  /** The live record of a collection with these identity values, if any (undefined too when it has no identity key). */
  async byIdentity(collection: string, values: FactValues, options: { project?: ProjectRef } = {}): Promise<FactRecord | undefined> {
    const { scope } = this.scope(options.project)
    const spec = await this.spec(scope, collection)
    const identity = spec ? identityOf(spec, fill(spec, values)) : undefined
    return identity === undefined ? undefined : await this.ctx.store.facts.byIdentity(scope, collection, identity)
  }

  private scope(project?: ProjectRef): { scope: FactScope; project: ProjectRef } {
    const p = project ?? resolveProjectRoot(this.ctx.cwd)
    return { scope: { projectRoot: p.root, user: this.ctx.access.user ?? null }, project: p }
  }

  private async spec(scope: FactScope, name: string): Promise<CollectionSpec | undefined> {
    return ACTIVITY_SPECS.find((c) => c.name === name) ?? (await this.ctx.store.facts.collections(scope)).find((c) => c.name === name)
  }

  /** @throws {MnemoError} `INVALID_INPUT` — a name of the activity collections, which the event log fills. */
  private writable(name: string): void {
    if (isActivityCollection(name)) {
      throw invalidInput(
        'collection',
        `${name} is the agent's own activity, derived from the event log; record into a collection of another name`,
        `the activity collections are ${ACTIVITY_SPECS.map((c) => c.name).join(', ')}`,
      )
    }
  }

  private async specOrThrow(scope: FactScope, name: string): Promise<CollectionSpec> {
    const spec = await this.spec(scope, name)
    if (spec) return spec
    throw await this.noCollection(scope, name)
  }

  /** The NOT_FOUND error for a collection the scope does not have, listing those it has. */
  private async noCollection(scope: FactScope, name: string): Promise<MnemoError> {
    const known = (await this.ctx.store.facts.collections(scope)).map((c) => c.name)
    return new MnemoError(
      'NOT_FOUND',
      `no collection ${name} in this project${known.length > 0 ? ` (collections: ${known.join(', ')})` : ' (it has none yet)'}`,
      {
        details: { kind: 'collection', id: name },
        hint: 'mnemo facts schema lists them; mnemo facts add <collection> <json> creates one',
      },
    )
  }

  /**
   * Declares a collection, or extends a declared one (new fields, enum values, synonyms; an identity or time field
   * where it had none).
   * @throws {MnemoError} `INVALID_INPUT` — a bad spec, naming its key path. `CONFLICT` — a field's type would change.
   */
  async declare(raw: unknown, options: { project?: ProjectRef } = {}): Promise<CollectionSpec> {
    const spec = checkSpec(raw)
    this.writable(spec.name)
    const { scope, project } = this.scope(options.project)
    const had = await this.spec(scope, spec.name)
    const merged = had ? mergeSpecs(had, spec) : spec
    if (had && stableStringify(had) === stableStringify(merged)) return had
    await this.ctx.append([
      factEvent(project, { op: 'fact', action: 'declare', collection: spec }, this.ctx.clock.now(), this.ctx.access.user),
    ])
    return merged
  }

  /**
   * Records one or more records in a collection, in one transaction. An undeclared collection is inferred from the
   * records (`inferSpec`), and fields a declared one lacks are inferred and added; a record whose identity key matches
   * a stored record updates it (unchanged when equal).
   *
   * @param input - A record (field → value) or an array of them; a record's own `id` key is kept as `external_id`.
   * @param options.coerce - Values are text (CSV cells): read "12" as an integer where the field says so.
   * @param options.labels - How errors name each record (default `<collection> record <n>`).
   * @param options.ids - The id each new record gets, by input position (default: derived from the scope, the
   *   collection and the identity, or the time and position); a record matching a stored one keeps that one's id.
   * @throws {MnemoError} `INVALID_INPUT` — a value of the wrong type or a bad field name, naming record and field.
   *   `CONFLICT` — two records of the input with the same identity and different values (identity clash).
   *   Nothing is stored when it throws.
   */
  async add(
    collection: string,
    input: unknown,
    options: FactWriteOptions & {
      coerce?: boolean
      labels?: string[]
      provenances?: FactProvenance[]
      ids?: (string | undefined)[]
    } = {},
  ): Promise<FactWriteResult> {
    checkName(collection, 'collection')
    this.writable(collection)
    const list = Array.isArray(input) ? input : [input]
    if (list.length === 0) throw invalidInput('records', 'no records to add')
    if (list.length > MAX_FACT_BATCH) throw invalidInput('records', `at most ${MAX_FACT_BATCH} records per write (got ${list.length})`)
    const status = options.status ?? 'done'
    if (!(FACT_STATUSES as readonly string[]).includes(status))
      throw invalidInput('status', `status must be one of ${FACT_STATUSES.join(', ')} (got ${JSON.stringify(status)})`)
    const label = (i: number): string => options.labels?.[i] ?? `${collection} record ${i + 1}`
    const raws = list.map((r, i) => {
      if (r === null || typeof r !== 'object' || Array.isArray(r))
        throw invalidInput(label(i), `${label(i)} must be a JSON object of field values (got ${JSON.stringify(r)?.slice(0, 60)})`)
      const clean = sanitizePayload(renameExternalId(r as Record<string, unknown>), this.ctx.redact) as Record<string, unknown>
      for (const k of Object.keys(clean)) checkName(k, `${label(i)}.${k}`)
      return clean
    })
    const { scope, project } = this.scope(options.project)
    const had = await this.spec(scope, collection)
    let spec = had ?? inferSpec(collection, raws, options.coerce ?? false)
    let declared: CollectionSpec | undefined = had ? undefined : spec
    if (had) {
      const missing = raws.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !had.fields.some((f) => f.name === k))))
      if (missing.some((m) => Object.keys(m).length > 0)) {
        declared = { name: collection, fields: inferFields(missing, options.coerce ?? false), identity: [] }
        spec = mergeSpecs(had, declared)
      }
    }
    if (declared) checkSpec(declared)
    const now = this.ctx.clock.now()
    const ops: FactOp[] = []
    const records: FactWriteResult['records'] = []
    const seen = new Map<string, { i: number; values: string; id: string }>()
    for (const [i, raw] of raws.entries()) {
      const values = checkValues(spec, raw, label(i), options.coerce ?? false)
      const identity = identityOf(spec, values)
      const shown = stableStringify(values)
      if (identity !== undefined) {
        const before = seen.get(identity)
        if (before) {
          if (before.values !== shown) {
            throw new MnemoError(
              'CONFLICT',
              `${label(i)} has the identity (${spec.identity.join(', ')}) = ${identity} of ${label(before.i)}, with other values`,
              {
                details: { kind: 'record', id: before.id },
                hint: 'merge the two records, or declare an identity key that tells them apart',
              },
            )
          }
          records.push({ id: before.id, outcome: 'unchanged' })
          continue
        }
      }
      const stored = identity !== undefined ? await this.ctx.store.facts.byIdentity(scope, collection, identity) : undefined
      const provenance = options.provenances?.[i] ?? options.provenance ?? { source: 'user' }
      if (stored && stableStringify(fill(spec, stored.values)) === shown && stored.status === status) {
        records.push({ id: stored.id, outcome: 'unchanged' })
        if (identity !== undefined) seen.set(identity, { i, values: shown, id: stored.id })
        continue
      }
      const id =
        stored?.id ??
        options.ids?.[i] ??
        makeId(
          'fct',
          now,
          `${scope.projectRoot}\u0000${scope.user ?? ''}\u0000${collection}\u0000${identity ?? `${now}\u0000${i}\u0000${shown}`}`,
        )
      if (identity !== undefined) seen.set(identity, { i, values: shown, id })
      ops.push({
        op: 'fact',
        action: 'assert',
        collection,
        id,
        values,
        ...(identity !== undefined ? { identity } : {}),
        status,
        ...(options.validFrom !== undefined ? { validFrom: options.validFrom } : {}),
        ...(options.validTo !== undefined ? { validTo: options.validTo } : {}),
        provenance,
      })
      records.push({ id, outcome: stored ? 'updated' : 'created' })
    }
    const events = [...(declared ? [{ op: 'fact', action: 'declare', collection: declared } as const] : []), ...ops].map((op) =>
      factEvent(project, op, now, this.ctx.access.user),
    )
    if (events.length > 0) await this.ctx.append(events)
    return { collection: spec, schemaChanged: declared !== undefined, records }
  }

  /**
   * Changes fields of a record (a new version; the old one stays in its history).
   * @throws {MnemoError} `NOT_FOUND` — no such record in scope. `INVALID_INPUT` — a bad value. `CONFLICT` — the change
   *   gives it the identity of another record (identity clash).
   */
  async update(id: string, patch: unknown, options: FactWriteOptions = {}): Promise<FactRecord> {
    const { scope, project } = this.scope(options.project)
    const record = await this.recordOrThrow(scope, id)
    if (patch === null || typeof patch !== 'object' || Array.isArray(patch))
      throw invalidInput('values', `the change to ${id} must be a JSON object of field values`)
    const spec = await this.specOrThrow(scope, record.collection)
    const clean = sanitizePayload(renameExternalId(patch as Record<string, unknown>), this.ctx.redact) as Record<string, unknown>
    const values = checkValues(spec, { ...record.values, ...clean }, `${record.collection} record ${id}`)
    const identity = identityOf(spec, values)
    const other = identity !== undefined ? await this.ctx.store.facts.byIdentity(scope, record.collection, identity) : undefined
    if (other && other.id !== id) {
      throw new MnemoError(
        'CONFLICT',
        `${record.collection} record ${id}: the change gives it the identity (${spec.identity.join(', ')}) = ${identity} of record ${other.id}`,
        { details: { kind: 'record', id: other.id } },
      )
    }
    const status = options.status ?? record.status
    const op: FactOp = {
      op: 'fact',
      action: 'assert',
      collection: record.collection,
      id,
      values,
      ...(identity !== undefined ? { identity } : {}),
      status,
      ...((options.validFrom ?? record.validFrom) !== undefined ? { validFrom: (options.validFrom ?? record.validFrom)! } : {}),
      ...((options.validTo ?? record.validTo) !== undefined ? { validTo: (options.validTo ?? record.validTo)! } : {}),
      provenance: options.provenance ?? { source: 'user' },
    }
    await this.ctx.append([factEvent(project, op, this.ctx.clock.now(), this.ctx.access.user)])
    return await this.recordOrThrow(scope, id)
  }

  /** Marks a record as no longer holding from `at` (world time, epoch ms; default now): it leaves queries, its history stays. */
  async retract(id: string, options: { project?: ProjectRef; at?: number } = {}): Promise<FactRecord> {
    const { scope, project } = this.scope(options.project)
    const record = await this.recordOrThrow(scope, id)
    const now = this.ctx.clock.now()
    await this.ctx.append([
      factEvent(
        project,
        { op: 'fact', action: 'retract', collection: record.collection, id, at: options.at ?? now },
        now,
        this.ctx.access.user,
      ),
    ])
    return await this.recordOrThrow(scope, id)
  }

  /**
   * Deletes a record for real: every event that wrote its values leaves the log (their keys become tombstones, so a
   * re-import does not bring them back), with every view and index row; a delete event keeps its id, collection and
   * the time, so `show` can say it was removed on request. Audited.
   * @throws {MnemoError} `NOT_FOUND` — no such record in scope.
   */
  async delete(
    id: string,
    options: { project?: ProjectRef; actor?: string } = {},
  ): Promise<{ id: string; collection: string; events: number }> {
    const { scope, project } = this.scope(options.project)
    const record = await this.ctx.store.facts.get(scope, id)
    if (!record) throw await this.notFound(scope, id)
    const seqs = await this.ctx.store.facts.eventSeqs(scope, id)
    const now = this.ctx.clock.now()
    await this.ctx.append([
      factEvent(
        project,
        {
          op: 'fact',
          action: 'delete',
          collection: record.collection,
          id,
          ...(record.identity !== undefined ? { identity: record.identity } : {}),
        },
        now,
        this.ctx.access.user,
      ),
    ])
    const events = await this.ctx.store.deleteEvents({ seqs })
    await this.ctx.store.audit({
      at: now,
      actor: options.actor ?? 'cli',
      action: 'fact-delete',
      target: id,
      count: events,
      details: { collection: record.collection },
    })
    return { id, collection: record.collection, events }
  }

  private async notFound(scope: FactScope, id: string): Promise<MnemoError> {
    const gone = await this.ctx.store.facts.tombstone(scope, id)
    return new MnemoError(
      'NOT_FOUND',
      gone ? `record ${id} was deleted at your request on ${new Date(gone.deletedAt).toISOString()}` : `no record ${id} in this project`,
      { details: { kind: 'record', id } },
    )
  }

  private async recordOrThrow(scope: FactScope, id: string): Promise<FactRecord & { retractedAt?: number }> {
    const record = await this.ctx.store.facts.get(scope, id)
    if (!record) throw await this.notFound(scope, id)
    return record
  }

  /** A record with its history (oldest first), or, for a deleted one, when it was deleted. @throws {MnemoError} `NOT_FOUND` — never recorded here. */
  async show(id: string, options: { project?: ProjectRef } = {}): Promise<FactShowResult> {
    const { scope } = this.scope(options.project)
    const record = await this.ctx.store.facts.get(scope, id)
    if (record) return { record, history: await this.ctx.store.facts.history(scope, id) }
    const gone = await this.ctx.store.facts.tombstone(scope, id)
    if (gone)
      return {
        deleted: {
          id,
          collection: gone.collection,
          deletedAt: gone.deletedAt,
          text: forgottenText(gone.deletedAt),
        },
      }
    throw await this.notFound(scope, id)
  }

  /**
   * A page of a collection's records in one state, sorted by a field or by record time, and how many it holds in that
   * state. An activity collection (derived from the event log) has current records only, each with its observation as
   * provenance; `deleted` lists tombstones (id and when; their values are gone), latest first.
   * @param options.state - `current` (default), `retracted`, `superseded` (earlier versions) or `deleted`.
   * @param options.sort - A field of the collection that is not a list or a boolean; default: record time.
   * @param options.order - `asc` (default) or `desc`.
   * @param options.offset - Records to skip, ≥ 0 (default 0). @param options.limit - 1–1000 (default 50).
   * @throws {MnemoError} `NOT_FOUND` — unknown collection. `INVALID_INPUT` — a limit or offset out of range, a sort
   *   field the collection lacks, a list or a boolean field, naming it.
   */
  async list(
    collection: string,
    options: {
      project?: ProjectRef
      state?: FactListState | 'deleted'
      sort?: string
      order?: 'asc' | 'desc'
      offset?: number
      limit?: number
    } = {},
  ): Promise<FactListResult> {
    const { scope } = this.scope(options.project)
    const spec = await this.specOrThrow(scope, collection)
    const limit = options.limit ?? 50
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalidInput('limit', `limit must be 1–1000 (got ${limit})`)
    const offset = options.offset ?? 0
    if (!Number.isInteger(offset) || offset < 0) throw invalidInput('offset', `offset must be a whole number ≥ 0 (got ${offset})`)
    const state = options.state ?? 'current'
    if (options.sort !== undefined) {
      const field = spec.fields.find((f) => f.name === options.sort)
      if (field === undefined)
        throw invalidInput(
          'sort',
          `${collection} has no field ${options.sort} to sort by (fields: ${spec.fields.map((f) => f.name).join(', ')})`,
        )
      if (field.type === 'list') throw invalidInput('sort', `${collection}.${field.name} is a list; sort by a field with one value`)
      // As in the query language's "order by": a boolean has no order to sort by (a query filters on it).
      if (field.type === 'boolean')
        throw invalidInput('sort', `${collection}.${field.name} is a boolean; sort by another field, or query: where ${field.name} = true`)
    }
    const dir = options.order ?? 'asc'
    if (state === 'deleted') {
      const page = await this.ctx.store.facts.tombstones(scope, collection, offset, limit)
      return { records: [], deleted: page.tombstones.map((t) => ({ ...t, text: forgottenText(t.deletedAt) })), total: page.total }
    }
    if (!isActivityCollection(collection)) {
      const page = await this.ctx.store.facts.list(scope, collection, {
        state,
        dir,
        offset,
        limit,
        ...(options.sort !== undefined ? { sort: options.sort } : {}),
      })
      return { ...page, deleted: [] }
    }
    // The event log's records are never retracted or superseded: they are rebuilt with it.
    if (state !== 'current') return { records: [], deleted: [], total: 0 }
    const answer = await this.ctx.store.facts.query(
      scope,
      spec,
      resolveQuery(
        {
          collection,
          status: 'any',
          verb: {
            verb: 'list',
            fields: [],
            limit,
            offset,
            order: { field: options.sort ?? spec.timeField ?? spec.fields[0]!.name, dir },
          },
        },
        spec,
      ),
      DEFAULT_FACT_LIMITS,
    )
    const records = (answer.value as ({ id: string } & FactValues)[]).map(({ id, ...values }): FactRecord => {
      const at = values['at'] ?? values['started']
      const session = values['session']
      return {
        id,
        collection,
        values,
        status: 'done',
        recordedAt: typeof at === 'string' ? Date.parse(at) : 0,
        version: 1,
        provenance: {
          source: 'activity',
          observation: id.split('#')[0]!,
          ...(typeof session === 'string' ? { session } : {}),
        },
      }
    })
    return { records, deleted: [], total: answer.matched }
  }

  /** The scope's collections with fields, types, identity, time field, record counts, time range and up to 3 example values per field. */
  async schema(options: { project?: ProjectRef; examples?: number } = {}): Promise<CollectionInfo[]> {
    const { scope } = this.scope(options.project)
    const stats = await this.ctx.store.facts.collectionStats(scope, options.examples ?? 3)
    const declared = (await this.ctx.store.facts.collections(scope)).map((spec): CollectionInfo => {
      const s = stats.get(spec.name)
      return {
        ...spec,
        records: s?.records ?? 0,
        examples: s?.examples ?? {},
        ...(s?.from !== undefined ? { from: s.from } : {}),
        ...(s?.to !== undefined ? { to: s.to } : {}),
      }
    })
    return [...declared, ...(await this.activityInfo(scope, options.examples ?? 3))].sort((a, b) => a.name.localeCompare(b.name))
  }

  /** The activity collections that hold records in the scope, with counts, ranges and example values (from their first 200 rows). */
  private async activityInfo(scope: FactScope, examples: number): Promise<CollectionInfo[]> {
    const out: CollectionInfo[] = []
    for (const spec of ACTIVITY_SPECS) {
      // One statement: the first 200 rows give the examples, and its coverage counts every record and their time range.
      const page = await this.ctx.store.facts.query(
        scope,
        spec,
        { collection: spec.name, status: 'any', verb: { verb: 'list', fields: [], limit: 200 } },
        DEFAULT_FACT_LIMITS,
      )
      if (page.matched === 0) continue
      const rows = page.value as Record<string, FactValues[string]>[]
      const sample: Record<string, FactValues[string][]> = {}
      for (const f of spec.fields) {
        const seen = new Map<string, FactValues[string]>()
        for (const row of rows) {
          const vs =
            f.type === 'list' && Array.isArray(row[f.name]) ? (row[f.name] as (string | number | boolean)[]) : [row[f.name] ?? null]
          for (const v of vs) if (v !== null && seen.size < examples) seen.set(JSON.stringify(v), v)
        }
        sample[f.name] = [...seen.values()]
      }
      out.push({
        ...spec,
        records: page.matched,
        examples: sample,
        ...(page.from !== undefined ? { from: page.from, to: page.to! } : {}),
      })
    }
    return out
  }

  /**
   * Answers a query (text in the fact query language, or its parsed form) exactly, from the scope's records. Calendar
   * periods (`this week`, `previous month`, `past 7 days`) are read on the engine's clock in its time zone.
   * @param options.explain - Include the SQL statements run and their parameters.
   * @param options.limits - Query bounds. Default `DEFAULT_FACT_LIMITS`.
   * @throws {MnemoError} `INVALID_INPUT` — a query that does not parse, names a field the collection lacks, compares a
   *   field with a value of another type, or would run too long. `NOT_FOUND` — an unknown collection.
   *
   * @example
   * import { answerValueText, openMnemo } from 'mnemo'
   * const mnemo = openMnemo()
   * try {
   *   const expenses = [{ category: 'food', amount: 12.5 }, { category: 'food', amount: 7 }, { category: 'rent', amount: 900 }]
   *   await mnemo.engine.facts.add('expenses', expenses)
   *   const answer = await mnemo.engine.facts.query('from expenses where category = "food" sum amount')
   *   console.log(answer.kind, answerValueText(answer), answer.records.length) // → number 19.5 2
   * } finally {
   *   await mnemo.close()
   * }
   */
  async query(
    query: string | FactQuery,
    options: { project?: ProjectRef; explain?: boolean; limits?: Partial<FactQueryLimits> } = {},
  ): Promise<FactAnswer> {
    const parsed = typeof query === 'string' ? parseFactQuery(query) : query
    const { scope } = this.scope(options.project)
    const clock = calendarClock(this.ctx.clock.now(), this.ctx.timeZone)
    const limits = { ...DEFAULT_FACT_LIMITS, ...options.limits }
    const store = this.ctx.store.facts
    if (store.queryByName && !isActivityCollection(parsed.collection)) {
      // A network store reads the spec in the query's own round trip.
      const ran = await store.queryByName(scope, parsed.collection, (spec) => resolveQuery(parsed, spec, clock), limits)
      if (ran === undefined) throw await this.noCollection(scope, parsed.collection)
      return toFactAnswer(ran.query, ran.result, options.explain ?? false)
    }
    const spec = await this.specOrThrow(scope, parsed.collection)
    const resolved = resolveQuery(parsed, spec, clock)
    return toFactAnswer(resolved, await store.query(scope, spec, resolved, limits), options.explain ?? false)
  }

  /**
   * Imports records from a JSONL file (one JSON object a line) or a CSV file (a header row; cells read by the
   * collection's types) into `collection`, in one transaction, provenance `import` with file and line.
   * @throws {MnemoError} `INVALID_INPUT` — an unreadable line or a bad value, naming the file, line and field; nothing is stored.
   *   `NOT_FOUND` — no such file.
   */
  async importFile(
    file: string,
    collection: string,
    options: FactWriteOptions & { format?: 'jsonl' | 'csv' } = {},
  ): Promise<FactWriteResult & { file: string }> {
    const abs = path.resolve(this.ctx.cwd, file)
    let text: string
    try {
      const size = statSync(abs).size
      if (size > MAX_FACT_FILE_BYTES)
        throw invalidInput('file', `${file} is ${size} bytes, above the import limit of ${MAX_FACT_FILE_BYTES}`)
      text = readFileSync(abs, 'utf8')
    } catch (cause) {
      if (MnemoError.is(cause)) throw cause
      throw new MnemoError('NOT_FOUND', `cannot read ${file}: ${cause instanceof Error ? cause.message : String(cause)}`, {
        details: { kind: 'file', id: file },
        cause,
      })
    }
    const format = options.format ?? (/\.csv$/i.test(file) ? 'csv' : 'jsonl')
    const name = path.basename(file)
    let rows: { line: number; record: unknown }[]
    if (format === 'csv') rows = parseCsv(text, name)
    else {
      rows = []
      text.split(/\r?\n/).forEach((line, i) => {
        if (line.trim().length === 0) return
        try {
          rows.push({ line: i + 1, record: JSON.parse(line) })
        } catch {
          throw invalidInput(`${name}:${i + 1}`, `${name} line ${i + 1} is not JSON: ${JSON.stringify(line.slice(0, 60))}`)
        }
      })
    }
    if (rows.length === 0) throw invalidInput('file', `${file} holds no records`)
    const result = await this.add(
      collection,
      rows.map((r) => r.record),
      {
        ...options,
        coerce: format === 'csv',
        labels: rows.map((r) => `${name} line ${r.line}`),
        provenances: rows.map((r) => ({ source: 'import', file: name, line: r.line })),
      },
    )
    return { ...result, file: abs }
  }
}

/** What mnemo says of a record deleted at a person's request: "you asked me to forget that on 2025-06-14" (UTC day). */
function forgottenText(deletedAt: number): string {
  return `you asked me to forget that on ${new Date(deletedAt).toISOString().slice(0, 10)}`
}

/** A record's values with every field of the spec present (null where absent), as `checkValues` gives them. */
function fill(spec: CollectionSpec, values: FactValues): FactValues {
  return Object.fromEntries(spec.fields.map((f) => [f.name, values[f.name] ?? null]))
}
