import { readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { invalidInput, MnemoError } from '../core/errors.js'
import { stableStringify } from '../core/hash.js'
import { makeId } from '../core/ids.js'
import type { ProjectRef } from '../core/types.js'
import { ACTIVITY_SPECS, isActivityCollection } from '../core/facts/activity.js'
import { parseCsv } from '../core/facts/csv.js'
import { FACT_STATUSES, type CollectionSpec, type FactOp, type FactRecord } from '../core/facts/fact-types.js'
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
import { sanitizePayload } from '../capture/sanitize.js'
import type { EngineContext } from './engine-context.js'
import {
  type FactWriteOptions,
  type FactWriteResult,
  factScope,
  fill,
  notFound,
  recordOrThrow,
  specOf,
  specOrThrow,
  type FactAddOptions,
} from './fact-ledger.js'

// The bodies of EngineFacts' writes (declare, add, update, retract, delete, import); the class's methods carry their
// contracts (facts.ts). Every write is a logged event (`factEvent`), checked first, so a refused write stores nothing.

/** Most records one add or import writes. */
const MAX_FACT_BATCH = 50_000
/** Largest file `importRecords` reads, bytes (64 MiB). */
const MAX_FACT_FILE_BYTES = 64 * 1024 * 1024

/** @throws {MnemoError} `INVALID_INPUT` — a name of the activity collections, which the event log fills. */
function writable(name: string): void {
  if (isActivityCollection(name)) {
    throw invalidInput(
      'collection',
      `${name} is the agent's own activity, derived from the event log; record into a collection of another name`,
      `the activity collections are ${ACTIVITY_SPECS.map((c) => c.name).join(', ')}`,
    )
  }
}

/** `EngineFacts.declare`. */
export async function declareCollection(ctx: EngineContext, raw: unknown, options: { project?: ProjectRef } = {}): Promise<CollectionSpec> {
  const spec = checkSpec(raw)
  writable(spec.name)
  const { scope, project } = factScope(ctx, options.project)
  const had = await specOf(ctx, scope, spec.name)
  const merged = had ? mergeSpecs(had, spec) : spec
  if (had && stableStringify(had) === stableStringify(merged)) return had
  await ctx.append([factEvent(project, { op: 'fact', action: 'declare', collection: spec }, ctx.clock.now(), ctx.access.user)])
  return merged
}

/** `EngineFacts.add`. */
export async function addRecords(
  ctx: EngineContext,
  collection: string,
  input: unknown,
  options: FactAddOptions = {},
): Promise<FactWriteResult> {
  checkName(collection, 'collection')
  writable(collection)
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
    const clean = sanitizePayload(renameExternalId(r as Record<string, unknown>), ctx.redact) as Record<string, unknown>
    for (const k of Object.keys(clean)) checkName(k, `${label(i)}.${k}`)
    return clean
  })
  const { scope, project } = factScope(ctx, options.project)
  const had = await specOf(ctx, scope, collection)
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
  const now = ctx.clock.now()
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
    const stored = identity !== undefined ? await ctx.store.facts.byIdentity(scope, collection, identity) : undefined
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
    factEvent(project, op, now, ctx.access.user),
  )
  if (events.length > 0) await ctx.append(events)
  return { collection: spec, schemaChanged: declared !== undefined, records }
}

/** `EngineFacts.update`. */
export async function updateRecord(ctx: EngineContext, id: string, patch: unknown, options: FactWriteOptions = {}): Promise<FactRecord> {
  const { scope, project } = factScope(ctx, options.project)
  const record = await recordOrThrow(ctx, scope, id)
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch))
    throw invalidInput('values', `the change to ${id} must be a JSON object of field values`)
  const spec = await specOrThrow(ctx, scope, record.collection)
  const clean = sanitizePayload(renameExternalId(patch as Record<string, unknown>), ctx.redact) as Record<string, unknown>
  const values = checkValues(spec, { ...record.values, ...clean }, `${record.collection} record ${id}`)
  const identity = identityOf(spec, values)
  const other = identity !== undefined ? await ctx.store.facts.byIdentity(scope, record.collection, identity) : undefined
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
  await ctx.append([factEvent(project, op, ctx.clock.now(), ctx.access.user)])
  return await recordOrThrow(ctx, scope, id)
}

/** `EngineFacts.retract`. */
export async function retractRecord(
  ctx: EngineContext,
  id: string,
  options: { project?: ProjectRef; at?: number } = {},
): Promise<FactRecord> {
  const { scope, project } = factScope(ctx, options.project)
  const record = await recordOrThrow(ctx, scope, id)
  const now = ctx.clock.now()
  await ctx.append([
    factEvent(project, { op: 'fact', action: 'retract', collection: record.collection, id, at: options.at ?? now }, now, ctx.access.user),
  ])
  return await recordOrThrow(ctx, scope, id)
}

/** `EngineFacts.delete`. */
export async function deleteRecord(
  ctx: EngineContext,
  id: string,
  options: { project?: ProjectRef; actor?: string } = {},
): Promise<{ id: string; collection: string; events: number }> {
  const { scope, project } = factScope(ctx, options.project)
  const record = await ctx.store.facts.get(scope, id)
  if (!record) throw await notFound(ctx, scope, id)
  const seqs = await ctx.store.facts.eventSeqs(scope, id)
  const now = ctx.clock.now()
  await ctx.append([
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
      ctx.access.user,
    ),
  ])
  const events = await ctx.store.deleteEvents({ seqs })
  await ctx.store.audit({
    at: now,
    actor: options.actor ?? 'cli',
    action: 'fact-delete',
    target: id,
    count: events,
    details: { collection: record.collection },
  })
  return { id, collection: record.collection, events }
}

/** `EngineFacts.importFile`. */
export async function importRecords(
  ctx: EngineContext,
  file: string,
  collection: string,
  options: FactWriteOptions & { format?: 'jsonl' | 'csv' } = {},
): Promise<FactWriteResult & { file: string }> {
  const abs = path.resolve(ctx.cwd, file)
  let text: string
  try {
    const size = statSync(abs).size
    if (size > MAX_FACT_FILE_BYTES) throw invalidInput('file', `${file} is ${size} bytes, above the import limit of ${MAX_FACT_FILE_BYTES}`)
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
  const result = await addRecords(
    ctx,
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
