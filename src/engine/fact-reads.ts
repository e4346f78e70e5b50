import { invalidInput } from '../core/errors.js'
import type { ProjectRef } from '../core/types.js'
import { ACTIVITY_SPECS, isActivityCollection } from '../core/facts/activity.js'
import { toFactAnswer, type FactAnswer } from '../core/facts/fact-answer.js'
import { parseFactQuery, type FactQuery } from '../core/facts/fact-query.js'
import type { CalendarClock } from '../core/facts/fact-periods.js'
import { resolveQuery } from '../core/facts/fact-resolve.js'
import type { CollectionInfo, FactRecord, FactValues } from '../core/facts/fact-types.js'
import { zonedDate, zonedMidnight } from '../retrieval/time-expressions.js'
import type { FactQueryLimits, FactScope } from '../storage/fact-store.js'
import type { EngineContext } from './engine-context.js'
import {
  type FactListResult,
  type FactShowResult,
  factScope,
  forgottenText,
  noCollection,
  notFound,
  specOrThrow,
  type FactListOptions,
} from './fact-ledger.js'

// The bodies of EngineFacts' reads (show, list, schema, query); the class's methods carry their contracts (facts.ts).

/** Default bounds of a query: collections above 200,000 records are refused; a query running past 2 s is stopped. */
export const DEFAULT_FACT_LIMITS: FactQueryLimits = { maxRows: 200_000, timeoutMs: 2000 }

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

/** `EngineFacts.show`. */
export async function showRecord(ctx: EngineContext, id: string, options: { project?: ProjectRef } = {}): Promise<FactShowResult> {
  const { scope } = factScope(ctx, options.project)
  const record = await ctx.store.facts.get(scope, id)
  if (record) return { record, history: await ctx.store.facts.history(scope, id) }
  const gone = await ctx.store.facts.tombstone(scope, id)
  if (gone)
    return {
      deleted: {
        id,
        collection: gone.collection,
        deletedAt: gone.deletedAt,
        text: forgottenText(gone.deletedAt),
      },
    }
  throw await notFound(ctx, scope, id)
}

/** `EngineFacts.list`. */
export async function listRecords(ctx: EngineContext, collection: string, options: FactListOptions = {}): Promise<FactListResult> {
  const { scope } = factScope(ctx, options.project)
  const spec = await specOrThrow(ctx, scope, collection)
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
    const page = await ctx.store.facts.tombstones(scope, collection, offset, limit)
    return { records: [], deleted: page.tombstones.map((t) => ({ ...t, text: forgottenText(t.deletedAt) })), total: page.total }
  }
  if (!isActivityCollection(collection)) {
    const page = await ctx.store.facts.list(scope, collection, {
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
  const answer = await ctx.store.facts.query(
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

/** `EngineFacts.schema`. */
export async function schemaOf(ctx: EngineContext, options: { project?: ProjectRef; examples?: number } = {}): Promise<CollectionInfo[]> {
  const { scope } = factScope(ctx, options.project)
  const stats = await ctx.store.facts.collectionStats(scope, options.examples ?? 3)
  const declared = (await ctx.store.facts.collections(scope)).map((spec): CollectionInfo => {
    const s = stats.get(spec.name)
    return {
      ...spec,
      records: s?.records ?? 0,
      examples: s?.examples ?? {},
      ...(s?.from !== undefined ? { from: s.from } : {}),
      ...(s?.to !== undefined ? { to: s.to } : {}),
    }
  })
  return [...declared, ...(await activityInfo(ctx, scope, options.examples ?? 3))].sort((a, b) => a.name.localeCompare(b.name))
}

/** The activity collections that hold records in the scope, with counts, ranges and example values (from their first 200 rows). */
async function activityInfo(ctx: EngineContext, scope: FactScope, examples: number): Promise<CollectionInfo[]> {
  const out: CollectionInfo[] = []
  for (const spec of ACTIVITY_SPECS) {
    // One statement: the first 200 rows give the examples, and its coverage counts every record and their time range.
    const page = await ctx.store.facts.query(
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
        const vs = f.type === 'list' && Array.isArray(row[f.name]) ? (row[f.name] as (string | number | boolean)[]) : [row[f.name] ?? null]
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

/** `EngineFacts.query`. */
export async function answerQuery(
  ctx: EngineContext,
  query: string | FactQuery,
  options: { project?: ProjectRef; explain?: boolean; limits?: Partial<FactQueryLimits> } = {},
): Promise<FactAnswer> {
  const parsed = typeof query === 'string' ? parseFactQuery(query) : query
  const { scope } = factScope(ctx, options.project)
  const clock = calendarClock(ctx.clock.now(), ctx.timeZone)
  const limits = { ...DEFAULT_FACT_LIMITS, ...options.limits }
  const store = ctx.store.facts
  if (store.queryByName && !isActivityCollection(parsed.collection)) {
    // A network store reads the spec in the query's own round trip.
    const ran = await store.queryByName(scope, parsed.collection, (spec) => resolveQuery(parsed, spec, clock), limits)
    if (ran === undefined) throw await noCollection(ctx, scope, parsed.collection)
    return toFactAnswer(ran.query, ran.result, options.explain ?? false)
  }
  const spec = await specOrThrow(ctx, scope, parsed.collection)
  const resolved = resolveQuery(parsed, spec, clock)
  return toFactAnswer(resolved, await store.query(scope, spec, resolved, limits), options.explain ?? false)
}
