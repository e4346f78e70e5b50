import { createRequire } from 'node:module'
import type DatabaseModule from 'better-sqlite3'
import { MnemoError } from '../../core/errors.js'
import type { MemoryId, ObservationId, ProjectId, SessionId } from '../../core/ids.js'
import type { AgentName, EntityRef, EventFormat, EventInput, Memory, Observation, Project, Session } from '../../core/types.js'
import type { FactStore } from '../fact-store.js'
import type {
  AppendResult,
  AuditEntry,
  BrowseMemoriesOptions,
  BrowseObservationsOptions,
  Derivation,
  EntityRow,
  EventFilter,
  InjectionKey,
  InjectionWhat,
  Scope,
  SearchDoc,
  SearchTextOptions,
  StepSession,
  Store,
  StoredEvent,
  StoreStats,
  TextMatch,
} from '../store.js'
import { MIGRATIONS } from './migrations.js'
import { isLockError, SqliteDb, wrap } from './sqlite-db.js'
import { createSqliteFacts } from './sqlite-facts.js'
import { entitiesById, entitiesInDocs, entityEdges, sampleDocs, searchEntities } from './sqlite-graph.js'
import {
  audit,
  auditLog,
  deleteEvents,
  eventsHaveCopies,
  foldEvents,
  integrityCheck,
  observationIdsOfEvents,
  putTombstones,
  rewritePayloads,
  sourceEventOf,
  stepOf,
  stepRecords,
  tombstones,
  vacuum,
} from './sqlite-log.js'
import {
  allMemories,
  browseMemories,
  browseObservations,
  currentMemoryByContent,
  getMemory,
  getObservation,
  getProject,
  getSession,
  lastEventSeq,
  listMemories,
  listProjects,
  listSessions,
  memoriesFromObservations,
  memoryByIdemKey,
  memoryHistory,
  observationPosition,
  readEvents,
  readScopedEvents,
  recordUsage,
  scopeCounts,
  sessionObservations,
  sessionObservationsPage,
  stats,
  usageCounts,
} from './sqlite-read.js'
import {
  coMentioned,
  countDocs,
  docs,
  docsInTimeRange,
  docsWithoutVector,
  dropSpace,
  entityMentions,
  entityNames,
  findEntities,
  getLsaModel,
  injections,
  lsaModelInfo,
  matchCount,
  neighbors,
  projectTexts,
  putLsaModel,
  putVectors,
  recordInjections,
  searchText,
  vectors,
} from './sqlite-search.js'
import { append, rebuild, rederiveSession } from './sqlite-write.js'

// better-sqlite3 is CommonJS: required, not imported, so that Node skips the export scan (cjs-module-lexer) an ES
// import of a CommonJS module costs every process at start-up. (The hook's bundle requires it either way.)
const Database = createRequire(import.meta.url)('better-sqlite3') as typeof DatabaseModule

export interface SqliteStoreOptions {
  /** Database file path, or `:memory:`. */
  path: string
  /** How long a writer waits for another process's lock before failing, ms. Default 5000. */
  busyTimeoutMs?: number
  /** Open without write access (no migrations). Default false. */
  readonly?: boolean
  /**
   * The derivation the running code makes (`DERIVATION_VERSION`): recorded as a new store's `derivedWith`. A store
   * without a record that already holds events was derived by code before versions were kept (1).
   */
  derivationVersion?: number
  /** The path errors name, when `path` is a stand-in (a read-only snapshot copy of it). Default: `path`. */
  label?: string
}

/**
 * Opens (creating and migrating when needed) the SQLite store at `options.path`:
 * WAL journal, `synchronous=FULL` so an acknowledged write survives a crash or
 * power loss, foreign keys on, a busy timeout so parallel writers (hooks of
 * concurrent sessions, the CLI, an import) wait instead of failing.
 *
 * @throws {MnemoError} `STORE_UNAVAILABLE` — the file cannot be opened or migrated; `cause` holds the driver error.
 */
export function openSqliteStore(options: SqliteStoreOptions, now: () => number = Date.now): Store {
  let db: DatabaseModule.Database | undefined
  try {
    db = new Database(options.path, { readonly: options.readonly ?? false })
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`)
    if (!options.readonly) {
      db.pragma('journal_mode = WAL')
      db.pragma('synchronous = FULL')
    }
    db.pragma('foreign_keys = ON')
    refuseNewerSchema(db, options.label ?? options.path)
    if (!options.readonly) {
      migrate(db)
      // Read first: a write, even one that changes nothing, costs a hook about 5 ms on every open.
      if (
        options.derivationVersion !== undefined &&
        db.prepare("SELECT 1 FROM store_meta WHERE key = 'derived_with'").get() === undefined
      ) {
        db.prepare(
          "INSERT INTO store_meta (key, value) SELECT 'derived_with', CASE WHEN EXISTS (SELECT 1 FROM events) THEN '1' ELSE ? END ON CONFLICT DO NOTHING",
        ).run(String(options.derivationVersion))
      }
    }
  } catch (cause) {
    // A file SQLite opened but could not set up (a full disk, a newer schema) is closed, or its descriptors stay open.
    try {
      db?.close()
    } catch {
      // The open's own error is the one to report.
    }
    throw wrap(cause, 'open', options.label ?? options.path)
  }
  return new SqliteStore(db, options.label ?? options.path, now)
}

/**
 * @throws {MnemoError} `STORE_UNAVAILABLE` — the file was written by a newer mnemo (a schema version this one does not know):
 *   writing to it could store rows the newer version reads wrongly.
 */
function refuseNewerSchema(db: DatabaseModule.Database, path: string): void {
  const version = db.pragma('user_version', { simple: true }) as number
  const known = MIGRATIONS.at(-1)?.version ?? 0
  if (version <= known) return
  throw new MnemoError(
    'STORE_UNAVAILABLE',
    `the database ${path} was written by a newer mnemo (schema version ${version}; this mnemo knows up to ${known})`,
    {
      details: { dialect: 'sqlite', operation: 'open' },
      hint: 'upgrade mnemo (npm install mnemo@latest), or point MNEMO_HOME at another data directory',
    },
  )
}

function migrate(db: DatabaseModule.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number
  if (current >= MIGRATIONS.length) return
  // IMMEDIATE takes the write lock first, so two processes opening a fresh file do not both migrate.
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number
    for (const m of MIGRATIONS) {
      if (m.version <= version) continue
      db.exec(m.sql)
      db.pragma(`user_version = ${m.version}`)
    }
  }).immediate()
}

/** The SQLite implementation of the Store port; each method's body lives in the module of its concern (sqlite-write, -search, -read, -graph, -log). */
class SqliteStore implements Store {
  private readonly s: SqliteDb
  readonly facts: FactStore

  constructor(db: DatabaseModule.Database, path: string, now: () => number) {
    this.s = new SqliteDb(db, path, now)
    this.facts = createSqliteFacts(this.s)
  }

  append(batch: readonly { event: EventInput; derive: () => Derivation; receivedAt?: number; sameAs?: readonly string[] }[]): AppendResult {
    return append(this.s, batch)
  }

  readEvents(afterSeq: number, limit: number): StoredEvent[] {
    return readEvents(this.s, afterSeq, limit)
  }

  rebuild(derive: (event: StoredEvent) => Derivation, derivedWith?: number): { events: number; observations: number } {
    return rebuild(this.s, derive, derivedWith)
  }

  derivedWith(): number | undefined {
    // A store opened read-only is not migrated: before schema 7 it has no store_meta, and its rows are of derivation 1.
    const hasMeta = this.s.stmt("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'store_meta'").get() !== undefined
    if (!hasMeta) return this.s.stmt('SELECT 1 FROM events LIMIT 1').get() !== undefined ? 1 : undefined
    const value = this.s.stmt("SELECT value FROM store_meta WHERE key = 'derived_with'").pluck().get() as string | undefined
    if (value === undefined) return undefined
    // A value that is no version (edited by hand, damaged) says nothing about the rows: assume the oldest, so a rebuild is offered.
    return /^[1-9]\d{0,5}$/.test(value) ? Number(value) : 1
  }

  rederiveSession(session: StepSession, derive: (event: StoredEvent) => Derivation): number {
    return rederiveSession(this.s, session, derive)
  }

  searchText(options: SearchTextOptions): TextMatch[] {
    return searchText(this.s, options)
  }

  vectors(space: string, scope: Scope): { docKey: number; vec: Float32Array }[] {
    return vectors(this.s, space, scope)
  }

  putVectors(space: string, rows: readonly { docKey: number; vec: Float32Array }[]): void {
    putVectors(this.s, space, rows)
  }

  dropSpace(space: string): void {
    dropSpace(this.s, space)
  }

  docsWithoutVector(space: string, scope: Scope, limit: number): { docKey: number; text: string }[] {
    return docsWithoutVector(this.s, space, scope, limit)
  }

  projectTexts(projectId: ProjectId, limit: number): string[] {
    return projectTexts(this.s, projectId, limit)
  }

  getLsaModel(projectId: ProjectId): { space: string; docCount: number; builtAt: number; model: Uint8Array } | undefined {
    return getLsaModel(this.s, projectId)
  }

  lsaModelInfo(projectId: ProjectId): { space: string; docCount: number; builtAt: number } | undefined {
    return lsaModelInfo(this.s, projectId)
  }

  putLsaModel(projectId: ProjectId, row: { space: string; docCount: number; builtAt: number; model: Uint8Array }): void {
    putLsaModel(this.s, projectId, row)
  }

  entityNames(projectIds: readonly ProjectId[]): string[] {
    return entityNames(this.s, projectIds)
  }

  findEntities(scope: Scope, refs: readonly EntityRef[], maxDocs?: number): { id: number; type: string; name: string; docs: number }[] {
    return findEntities(this.s, scope, refs, maxDocs)
  }

  entityMentions(
    entityIds: readonly number[],
    scope: Scope & { sessionId?: SessionId },
    limit: number,
  ): { entityId: number; docKey: number }[] {
    return entityMentions(this.s, entityIds, scope, limit)
  }

  coMentioned(entityIds: readonly number[], scope: Scope, limit: number, maxDocs?: number): { id: number; shared: number; docs: number }[] {
    return coMentioned(this.s, entityIds, scope, limit, maxDocs)
  }

  countDocs(scope: Scope): number {
    return countDocs(this.s, scope)
  }

  matchCount(options: Scope & { match: string; limit: number }): number {
    return matchCount(this.s, options)
  }

  recordInjections(key: InjectionKey, rows: readonly { itemId: string; what: InjectionWhat }[], at: number): void {
    recordInjections(this.s, key, rows, at)
  }

  injections(key: InjectionKey): { itemId: string; what: InjectionWhat; at: number }[] {
    return injections(this.s, key)
  }

  docsInTimeRange(options: Scope & { sessionId?: SessionId; from: number; to: number; limit: number }): number[] {
    return docsInTimeRange(this.s, options)
  }

  docs(docKeys: readonly number[]): SearchDoc[] {
    return docs(this.s, docKeys)
  }

  neighbors(
    docs: readonly { docKey: number; sessionId: SessionId | undefined; ts: number }[],
    span: number,
  ): Map<number, { prev: number[]; next: number[] }> {
    return neighbors(this.s, docs, span)
  }

  getObservation(id: ObservationId | string): Observation | undefined {
    return getObservation(this.s, id)
  }

  getMemory(id: MemoryId | string): Memory | undefined {
    return getMemory(this.s, id)
  }

  memoryByIdemKey(idemKey: string): Memory | undefined {
    return memoryByIdemKey(this.s, idemKey)
  }

  currentMemoryByContent(projectRoot: string, contentKey: string, user: string | undefined, agent?: AgentName | null): Memory | undefined {
    return currentMemoryByContent(this.s, projectRoot, contentKey, user, agent)
  }

  recordUsage(memoryIds: readonly string[], day: string): void {
    // Reinforcement is a side effect of reading: a store opened read-only is read without it.
    if (this.s.db.readonly) return
    try {
      this.s.withoutLockWait(() => recordUsage(this.s, memoryIds, day))
    } catch (error) {
      // A day's count missed while another process writes costs a little reinforcement; making the read wait costs the reader.
      if (!isLockError(error)) throw error
    }
  }

  withoutLockWait<T>(fn: () => T): T {
    return this.s.withoutLockWait(fn)
  }

  usageCounts(memoryIds: readonly string[]): Map<string, number> {
    return usageCounts(this.s, memoryIds)
  }

  allMemories(projectId: ProjectId): Memory[] {
    return allMemories(this.s, projectId)
  }

  memoryHistory(id: string): Memory[] {
    return memoryHistory(this.s, id)
  }

  observationIdsOfEvents(filter: EventFilter & { projectRoot: string }): string[] {
    return observationIdsOfEvents(this.s, filter)
  }

  eventsHaveCopies(seqs: readonly number[]): boolean {
    return eventsHaveCopies(this.s, seqs)
  }

  stepRecords(session: StepSession, origin: string, step: { sourceRef?: string; kind: string; text: string; ts: number }): string[] {
    return stepRecords(this.s, session, origin, step)
  }

  stepOf(observationId: string): { origin: string | undefined; session: StepSession } | undefined {
    return stepOf(this.s, observationId)
  }

  sourceEventOf(id: string): number | undefined {
    return sourceEventOf(this.s, id)
  }

  deleteEvents(filter: EventFilter): number {
    return deleteEvents(this.s, filter)
  }

  getSession(id: SessionId | string): Session | undefined {
    return getSession(this.s, id)
  }

  getProject(id: ProjectId | string): Project | undefined {
    return getProject(this.s, id)
  }

  listProjects(scope: Omit<Scope, 'projectIds'> = {}): Project[] {
    return listProjects(this.s, scope)
  }

  listSessions(options: Scope & { limit: number; offset?: number; excludeAgent?: string }): Session[] {
    return listSessions(this.s, options)
  }

  sessionObservations(sessionId: SessionId, limit: number): Observation[] {
    return sessionObservations(this.s, sessionId, limit)
  }

  listMemories(options: Scope & { limit: number }): Memory[] {
    return listMemories(this.s, options)
  }

  browseObservations(options: BrowseObservationsOptions): (Observation & { agent: AgentName })[] {
    return browseObservations(this.s, options)
  }

  lastEventSeq(): number {
    return lastEventSeq(this.s)
  }

  sessionObservationsPage(sessionId: SessionId, offset: number, limit: number): Observation[] {
    return sessionObservationsPage(this.s, sessionId, offset, limit)
  }

  observationPosition(sessionId: SessionId, observationId: string): number | undefined {
    return observationPosition(this.s, sessionId, observationId)
  }

  browseMemories(options: BrowseMemoriesOptions): { memories: Memory[]; total: number } {
    return browseMemories(this.s, options)
  }

  memoriesFromObservations(projectId: ProjectId, observationIds: readonly string[]): Map<string, string[]> {
    return memoriesFromObservations(this.s, projectId, observationIds)
  }

  searchEntities(scope: Scope & { projectIds: readonly ProjectId[] }, text: string, limit: number): EntityRow[] {
    return searchEntities(this.s, scope, text, limit)
  }

  sampleDocs(scope: Scope & { projectIds: readonly ProjectId[] }, entityId: number | undefined, limit: number): number[] {
    return sampleDocs(this.s, scope, entityId, limit)
  }

  entitiesInDocs(docKeys: readonly number[], limit: number): { id: number; shared: number }[] {
    return entitiesInDocs(this.s, docKeys, limit)
  }

  entitiesById(ids: readonly number[]): EntityRow[] {
    return entitiesById(this.s, ids)
  }

  entityEdges(ids: readonly number[], docKeys: readonly number[]): { source: number; target: number; weight: number }[] {
    return entityEdges(this.s, ids, docKeys)
  }

  scopeCounts(
    projectRoot?: string,
    user?: string | null,
    agent?: AgentName,
  ): { events: number; sessions: number; observations: number; memories: number } {
    return scopeCounts(this.s, projectRoot, user, agent)
  }

  readScopedEvents(afterSeq: number, limit: number, scope: { projectRoot?: string; user?: string | null }): StoredEvent[] {
    return readScopedEvents(this.s, afterSeq, limit, scope)
  }

  stats(): StoreStats {
    return stats(this.s)
  }

  rewritePayloads(fn: (payload: unknown) => unknown): number {
    return rewritePayloads(this.s, fn)
  }

  foldEvents(
    options: { before: number; projectRoot?: string; user?: string | null },
    fold: (event: StoredEvent) => { format: EventFormat; payload: unknown } | undefined,
  ): { events: number; bytesBefore: number; bytesAfter: number } {
    return foldEvents(this.s, options, fold)
  }

  vacuum(): { bytesBefore: number; bytesAfter: number } {
    return vacuum(this.s)
  }

  tombstones(projectRoot?: string): { idemKey: string; at: number; projectRoot: string | undefined }[] {
    return tombstones(this.s, projectRoot)
  }

  putTombstones(rows: readonly { idemKey: string; at: number; projectRoot: string | undefined }[]): void {
    putTombstones(this.s, rows)
  }

  audit(entry: AuditEntry): void {
    audit(this.s, entry)
  }

  auditLog(limit: number): AuditEntry[] {
    return auditLog(this.s, limit)
  }

  integrityCheck(): string {
    return integrityCheck(this.s)
  }

  close(): void {
    if (this.s.db.open) this.s.db.close()
  }
}
