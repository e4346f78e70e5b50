import { MnemoError } from '../core/errors.js'
import type { ProjectRef } from '../core/types.js'
import { ACTIVITY_SPECS } from '../core/facts/activity.js'
import type { CollectionSpec, FactProvenance, FactRecord, FactStatus, FactValues, FactVersion } from '../core/facts/fact-types.js'
import { resolveProjectRoot } from '../capture/project.js'
import type { FactListedRecord, FactListState, FactScope } from '../storage/fact-store.js'
import type { EngineContext } from './engine-context.js'

// What the fact ledger's writes (fact-writes.ts) and reads (fact-reads.ts) share: the shapes they take and return (the
// public ones re-exported by facts.ts), the scope of a call, the collection it names, and the errors for what is
// not there.

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

/** Options of `EngineFacts.add`: a write's, and how its input is read (see `add`). */
export type FactAddOptions = FactWriteOptions & {
  coerce?: boolean
  labels?: string[]
  provenances?: FactProvenance[]
  ids?: (string | undefined)[]
}

/** Options of `EngineFacts.list`: which records, in what order, which page (see `list`). */
export interface FactListOptions {
  project?: ProjectRef
  state?: FactListState | 'deleted'
  sort?: string
  order?: 'asc' | 'desc'
  offset?: number
  limit?: number
}

/** What one add or import did, per record in input order. */
export interface FactWriteResult {
  collection: CollectionSpec
  /** True when the collection was declared or gained fields by this write. */
  schemaChanged: boolean
  records: { id: string; outcome: 'created' | 'updated' | 'unchanged' }[]
}

/** A page of a listing: records (current, retracted or superseded versions), or tombstones (`deleted`), and how many there are. */
export interface FactListResult {
  records: FactListedRecord[]
  /** Each with `text`: "you asked me to forget that on <day>". */
  deleted: { id: string; deletedAt: number; text: string }[]
  total: number
}

/** A record with its history, or what is left of a deleted one. */
export type FactShowResult =
  | { record: FactRecord & { retractedAt?: number }; history: FactVersion[] }
  | { deleted: { id: string; collection: string; deletedAt: number; text: string } }

/** The scope of a call: the project it names (default: the working directory's) and the engine's user; never across users. */
export function factScope(ctx: EngineContext, project?: ProjectRef): { scope: FactScope; project: ProjectRef } {
  const p = project ?? resolveProjectRoot(ctx.cwd)
  return { scope: { projectRoot: p.root, user: ctx.access.user ?? null }, project: p }
}

/** A collection's spec (an activity collection's, or one the scope declared), or undefined. */
export async function specOf(ctx: EngineContext, scope: FactScope, name: string): Promise<CollectionSpec | undefined> {
  return ACTIVITY_SPECS.find((c) => c.name === name) ?? (await ctx.store.facts.collections(scope)).find((c) => c.name === name)
}

/** @throws {MnemoError} `NOT_FOUND` — the scope has no such collection (see `noCollection`). */
export async function specOrThrow(ctx: EngineContext, scope: FactScope, name: string): Promise<CollectionSpec> {
  const spec = await specOf(ctx, scope, name)
  if (spec) return spec
  throw await noCollection(ctx, scope, name)
}

/** The NOT_FOUND error for a collection the scope does not have, listing those it has. */
export async function noCollection(ctx: EngineContext, scope: FactScope, name: string): Promise<MnemoError> {
  const known = (await ctx.store.facts.collections(scope)).map((c) => c.name)
  return new MnemoError(
    'NOT_FOUND',
    `no collection ${name} in this project${known.length > 0 ? ` (collections: ${known.join(', ')})` : ' (it has none yet)'}`,
    {
      details: { kind: 'collection', id: name },
      hint: 'mnemo facts schema lists them; mnemo facts add <collection> <json> creates one',
    },
  )
}

/** The NOT_FOUND error for a record the scope does not hold: deleted at a person's request (with when), or never recorded. */
export async function notFound(ctx: EngineContext, scope: FactScope, id: string): Promise<MnemoError> {
  const gone = await ctx.store.facts.tombstone(scope, id)
  return new MnemoError(
    'NOT_FOUND',
    gone ? `record ${id} was deleted at your request on ${new Date(gone.deletedAt).toISOString()}` : `no record ${id} in this project`,
    { details: { kind: 'record', id } },
  )
}

/** @throws {MnemoError} `NOT_FOUND` — no such record in the scope (see `notFound`). */
export async function recordOrThrow(ctx: EngineContext, scope: FactScope, id: string): Promise<FactRecord & { retractedAt?: number }> {
  const record = await ctx.store.facts.get(scope, id)
  if (!record) throw await notFound(ctx, scope, id)
  return record
}

/** What mnemo says of a record deleted at a person's request: "you asked me to forget that on 2025-06-14" (UTC day). */
export function forgottenText(deletedAt: number): string {
  return `you asked me to forget that on ${new Date(deletedAt).toISOString().slice(0, 10)}`
}

/** A record's values with every field of the spec present (null where absent), as `checkValues` gives them. */
export function fill(spec: CollectionSpec, values: FactValues): FactValues {
  return Object.fromEntries(spec.fields.map((f) => [f.name, values[f.name] ?? null]))
}
