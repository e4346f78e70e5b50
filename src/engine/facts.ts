import type { ProjectRef } from '../core/types.js'
import type { FactAnswer } from '../core/facts/fact-answer.js'
import type { FactQuery } from '../core/facts/fact-query.js'
import type { CollectionInfo, CollectionSpec, FactRecord, FactValues } from '../core/facts/fact-types.js'
import { identityOf } from '../core/facts/fact-values.js'
import type { FactQueryLimits } from '../storage/fact-store.js'
import type { EngineContext } from './engine-context.js'
import { FactDependencies } from './fact-dependencies.js'
import { addRecords, declareCollection, deleteRecord, importRecords, retractRecord, updateRecord } from './fact-writes.js'
import { answerQuery, listRecords, schemaOf, showRecord } from './fact-reads.js'
import {
  type FactListResult,
  type FactShowResult,
  type FactWriteOptions,
  type FactWriteResult,
  factScope,
  fill,
  specOf,
  type FactAddOptions,
  type FactListOptions,
} from './fact-ledger.js'

export { calendarClock, DEFAULT_FACT_LIMITS } from './fact-reads.js'
export type { FactShowResult, FactWriteOptions, FactWriteResult } from './fact-ledger.js'

/**
 * The fact ledger's use cases (docs/FACTS.md): declaring collections, recording, updating, retracting and deleting
 * records, imports, the schema listing and queries. Every write is a logged event (`factEvent`), checked first, so a
 * refused write stores nothing, and `rebuild` and export/import carry facts with the rest of the log. Scoped to one
 * project and the engine's user; never across users. The method bodies are in fact-writes.ts and fact-reads.ts.
 */
export class EngineFacts {
  /** Dependent facts: entity-attribute state with rules propagated at write time (engine/fact-dependencies.ts). */
  readonly dependencies: FactDependencies

  constructor(private readonly ctx: EngineContext) {
    this.dependencies = new FactDependencies(this, () => ctx.clock.now())
  }

  /** A collection's spec (an activity collection's, or a declared one's), or undefined. */
  collection(name: string, options: { project?: ProjectRef } = {}): Promise<CollectionSpec | undefined> {
    return specOf(this.ctx, factScope(this.ctx, options.project).scope, name)
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
    const { scope } = factScope(this.ctx, options.project)
    const spec = await specOf(this.ctx, scope, collection)
    const identity = spec ? identityOf(spec, fill(spec, values)) : undefined
    return identity === undefined ? undefined : await this.ctx.store.facts.tombstoneByIdentity(scope, collection, identity)
  }

  /** The live record of a collection with these identity values, if any (undefined too when it has no identity key). */
  async byIdentity(collection: string, values: FactValues, options: { project?: ProjectRef } = {}): Promise<FactRecord | undefined> {
    const { scope } = factScope(this.ctx, options.project)
    const spec = await specOf(this.ctx, scope, collection)
    const identity = spec ? identityOf(spec, fill(spec, values)) : undefined
    return identity === undefined ? undefined : await this.ctx.store.facts.byIdentity(scope, collection, identity)
  }

  /**
   * Declares a collection, or extends a declared one (new fields, enum values, synonyms; an identity or time field
   * where it had none).
   * @throws {MnemoError} `INVALID_INPUT` — a bad spec, naming its key path. `CONFLICT` — a field's type would change.
   */
  declare(raw: unknown, options: { project?: ProjectRef } = {}): Promise<CollectionSpec> {
    return declareCollection(this.ctx, raw, options)
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
  add(collection: string, input: unknown, options: FactAddOptions = {}): Promise<FactWriteResult> {
    return addRecords(this.ctx, collection, input, options)
  }

  /**
   * Changes fields of a record (a new version; the old one stays in its history).
   * @throws {MnemoError} `NOT_FOUND` — no such record in scope. `INVALID_INPUT` — a bad value. `CONFLICT` — the change
   *   gives it the identity of another record (identity clash).
   */
  update(id: string, patch: unknown, options: FactWriteOptions = {}): Promise<FactRecord> {
    return updateRecord(this.ctx, id, patch, options)
  }

  /** Marks a record as no longer holding from `at` (world time, epoch ms; default now): it leaves queries, its history stays. */
  retract(id: string, options: { project?: ProjectRef; at?: number } = {}): Promise<FactRecord> {
    return retractRecord(this.ctx, id, options)
  }

  /**
   * Deletes a record for real: every event that wrote its values leaves the log (their keys become tombstones, so a
   * re-import does not bring them back), with every view and index row; a delete event keeps its id, collection and
   * the time, so `show` can say it was removed on request. Audited.
   * @throws {MnemoError} `NOT_FOUND` — no such record in scope.
   */
  delete(id: string, options: { project?: ProjectRef; actor?: string } = {}): Promise<{ id: string; collection: string; events: number }> {
    return deleteRecord(this.ctx, id, options)
  }

  /** A record with its history (oldest first), or, for a deleted one, when it was deleted. @throws {MnemoError} `NOT_FOUND` — never recorded here. */
  show(id: string, options: { project?: ProjectRef } = {}): Promise<FactShowResult> {
    return showRecord(this.ctx, id, options)
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
  list(collection: string, options: FactListOptions = {}): Promise<FactListResult> {
    return listRecords(this.ctx, collection, options)
  }

  /** The scope's collections with fields, types, identity, time field, record counts, time range and up to 3 example values per field. */
  schema(options: { project?: ProjectRef; examples?: number } = {}): Promise<CollectionInfo[]> {
    return schemaOf(this.ctx, options)
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
  query(
    query: string | FactQuery,
    options: { project?: ProjectRef; explain?: boolean; limits?: Partial<FactQueryLimits> } = {},
  ): Promise<FactAnswer> {
    return answerQuery(this.ctx, query, options)
  }

  /**
   * Imports records from a JSONL file (one JSON object a line) or a CSV file (a header row; cells read by the
   * collection's types) into `collection`, in one transaction, provenance `import` with file and line.
   * @throws {MnemoError} `INVALID_INPUT` — an unreadable line or a bad value, naming the file, line and field; nothing is stored.
   *   `NOT_FOUND` — no such file.
   */
  importFile(
    file: string,
    collection: string,
    options: FactWriteOptions & { format?: 'jsonl' | 'csv' } = {},
  ): Promise<FactWriteResult & { file: string }> {
    return importRecords(this.ctx, file, collection, options)
  }
}
