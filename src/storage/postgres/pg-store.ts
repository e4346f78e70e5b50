import type { MemoryId, ObservationId, ProjectId, SessionId } from '../../core/ids.js'
import type { AgentName, EventFormat, Memory, Observation, Project, Session } from '../../core/types.js'
import type { FactStore } from '../fact-store.js'
import type {
  AppendItem,
  AppendResult,
  AuditEntry,
  BrowseMemoriesOptions,
  BrowseObservationsOptions,
  Derivation,
  EventFilter,
  GraphIndex,
  InjectionKey,
  InjectionWhat,
  Scope,
  SearchIndex,
  StepSession,
  Store,
  StoredEvent,
  StoreStats,
  VectorIndex,
} from '../store.js'
import { PgDb, type PgDbOptions } from './pg-db.js'
import { runExclusive } from './pg-jobs.js'
import { audit, auditLog, derivedWith, integrityCheck, scopeCounts, stats, vacuum } from './pg-lifecycle.js'
import {
  deleteEvents,
  eventsHaveCopies,
  foldEvents,
  lastEventSeq,
  observationIdsOfEvents,
  putTombstones,
  readEvents,
  readScopedEvents,
  rewritePayloads,
  sourceEventOf,
  stepOf,
  stepRecords,
  tombstones,
} from './pg-log.js'
import { migrate, type PgMigration } from './pg-migrations.js'
import * as read from './pg-read.js'
import { rebuild, rederiveSession } from './pg-rebuild.js'
import { BASE_MIGRATION } from './pg-schema.js'
import { append, type PgWriteParts } from './pg-write.js'
import { PG_PARTS } from './pg-parts.js'

/**
 * The parts of the PostgreSQL dialect beside this module's own (the log, derivation writes, derived reads,
 * lifecycle): the search, graph and vector channels (pg-search*.ts, pg-graph.ts, pg-vectors.ts) and the fact ledger
 * (pg-facts*.ts), with the schema steps each adds after the base and what each writes inside the store's transactions.
 */
export interface PgParts {
  /** Schema steps after `BASE_MIGRATION`, in order. */
  migrations: readonly PgMigration[]
  write: PgWriteParts
  channels(db: PgDb): SearchIndex & GraphIndex & VectorIndex
  facts(db: PgDb): FactStore
}

/** Options of `openPostgresStore`. */
interface PostgresStoreOptions extends PgDbOptions {
  /**
   * The derivation the running code makes (`DERIVATION_VERSION`): recorded as a new store's `derivedWith`. A store
   * without a record that already holds events was derived before versions were kept (1).
   */
  derivationVersion?: number
}

/**
 * Opens the PostgreSQL store at `url` with `parts` (see `PgParts`): connects, applies the schema steps not yet applied
 * (under an advisory lock: replicas starting at once migrate once), and records the derivation version of a new store.
 * @throws {MnemoError} `INVALID_INPUT` (path `database`) — `url` is not a postgres:// URL; `STORE_UNAVAILABLE` — the
 *   server cannot be reached or the schema cannot be applied (the pool is closed again).
 */
export async function openPostgresStoreWith(url: string, parts: PgParts, options: PostgresStoreOptions = {}): Promise<Store> {
  const db = PgDb.open(url, options)
  try {
    await migrate(db, [BASE_MIGRATION, ...parts.migrations])
    if (options.derivationVersion !== undefined) {
      await db.query(
        'open',
        `INSERT INTO store_meta (key, value)
         SELECT 'derived_with', CASE WHEN EXISTS (SELECT 1 FROM events) THEN '1' ELSE $1 END ON CONFLICT DO NOTHING`,
        [String(options.derivationVersion)],
      )
    }
  } catch (cause) {
    await db.close().catch(() => {})
    throw db.wrap(cause, 'open')
  }
  return new PostgresStore(db, parts)
}

type Channels = SearchIndex & GraphIndex & VectorIndex

/**
 * The PostgreSQL implementation of the Store port. Each method's body lives in the module of its concern: the log
 * (pg-log, pg-write, pg-rebuild), derived reads (pg-read), lifecycle (pg-lifecycle), and the parts of `PgParts`
 * (channels, facts). Writes run in one transaction each under the store's write lock (pg-db.ts `WRITE_LOCK`); reads run
 * on any pooled connection and never wait for a writer.
 */
class PostgresStore implements Store {
  readonly dialect = 'postgres' as const
  readonly facts: FactStore
  private readonly channels: Channels

  constructor(
    private readonly db: PgDb,
    private readonly parts: PgParts,
  ) {
    this.facts = parts.facts(db)
    this.channels = parts.channels(db)
  }

  // The event log.
  append(batch: readonly AppendItem[]): Promise<AppendResult> {
    return append(this.db, this.parts.write, batch)
  }
  readEvents(afterSeq: number, limit: number): Promise<StoredEvent[]> {
    return readEvents(this.db, afterSeq, limit)
  }
  readScopedEvents(afterSeq: number, limit: number, scope: { projectRoot?: string; user?: string | null }): Promise<StoredEvent[]> {
    return readScopedEvents(this.db, afterSeq, limit, scope)
  }
  lastEventSeq(): Promise<number> {
    return lastEventSeq(this.db)
  }
  rebuild(derive: (event: StoredEvent) => Derivation, version?: number): Promise<{ events: number; observations: number }> {
    return rebuild(this.db, this.parts.write, derive, version)
  }
  derivedWith(): Promise<number | undefined> {
    return derivedWith(this.db)
  }
  rederiveSession(session: StepSession, derive: (event: StoredEvent) => Derivation): Promise<number> {
    return rederiveSession(this.db, this.parts.write, session, derive)
  }
  deleteEvents(filter: EventFilter): Promise<number> {
    return deleteEvents(this.db, this.parts.write, filter)
  }
  observationIdsOfEvents(filter: EventFilter & { projectRoot: string }): Promise<string[]> {
    return observationIdsOfEvents(this.db, filter)
  }
  eventsHaveCopies(seqs: readonly number[]): Promise<boolean> {
    return eventsHaveCopies(this.db, seqs)
  }
  stepRecords(
    session: StepSession,
    origin: string,
    step: { sourceRef?: string; kind: string; text: string; ts: number },
  ): Promise<string[]> {
    return stepRecords(this.db, session, origin, step)
  }
  stepOf(observationId: string): Promise<{ origin: string | undefined; session: StepSession } | undefined> {
    return stepOf(this.db, observationId)
  }
  sourceEventOf(id: string): Promise<number | undefined> {
    return sourceEventOf(this.db, id)
  }
  rewritePayloads(fn: (payload: unknown) => unknown): Promise<number> {
    return rewritePayloads(this.db, fn)
  }
  foldEvents(
    options: { before: number; projectRoot?: string; user?: string | null },
    fold: (event: StoredEvent) => { format: EventFormat; payload: unknown } | undefined,
  ): Promise<{ events: number; bytesBefore: number; bytesAfter: number }> {
    return foldEvents(this.db, options, fold)
  }
  tombstones(projectRoot?: string): Promise<{ idemKey: string; at: number; projectRoot: string | undefined }[]> {
    return tombstones(this.db, projectRoot)
  }
  putTombstones(rows: readonly { idemKey: string; at: number; projectRoot: string | undefined }[]): Promise<void> {
    return putTombstones(this.db, rows)
  }

  // Derived reads.
  getObservation(id: ObservationId | string): Promise<Observation | undefined> {
    return read.getObservation(this.db, id)
  }
  getMemory(id: MemoryId | string): Promise<Memory | undefined> {
    return read.getMemory(this.db, id)
  }
  getSession(id: SessionId | string): Promise<Session | undefined> {
    return read.getSession(this.db, id)
  }
  getProject(id: ProjectId | string): Promise<Project | undefined> {
    return read.getProject(this.db, id)
  }
  memoryByIdemKey(idemKey: string): Promise<Memory | undefined> {
    return read.memoryByIdemKey(this.db, idemKey)
  }
  currentMemoryByContent(
    projectRoot: string,
    contentKey: string,
    user: string | undefined,
    agent?: AgentName | null,
  ): Promise<Memory | undefined> {
    return read.currentMemoryByContent(this.db, projectRoot, contentKey, user, agent)
  }
  allMemories(projectId: ProjectId): Promise<Memory[]> {
    return read.allMemories(this.db, projectId)
  }
  memoryHistory(id: string): Promise<Memory[]> {
    return read.memoryHistory(this.db, id)
  }
  listProjects(scope?: Omit<Scope, 'projectIds'>): Promise<Project[]> {
    return read.listProjects(this.db, scope)
  }
  listSessions(options: Scope & { limit: number; offset?: number; excludeAgent?: string }): Promise<Session[]> {
    return read.listSessions(this.db, options)
  }
  sessionObservations(sessionId: SessionId, limit: number): Promise<Observation[]> {
    return read.sessionObservationsPage(this.db, sessionId, 0, limit)
  }
  sessionObservationsPage(sessionId: SessionId, offset: number, limit: number): Promise<Observation[]> {
    return read.sessionObservationsPage(this.db, sessionId, offset, limit)
  }
  observationPosition(sessionId: SessionId, observationId: string): Promise<number | undefined> {
    return read.observationPosition(this.db, sessionId, observationId)
  }
  listMemories(options: Scope & { limit: number }): Promise<Memory[]> {
    return read.listMemories(this.db, options)
  }
  browseObservations(options: BrowseObservationsOptions): Promise<(Observation & { agent: AgentName })[]> {
    return read.browseObservations(this.db, options)
  }
  browseMemories(options: BrowseMemoriesOptions): Promise<{ memories: Memory[]; total: number }> {
    return read.browseMemories(this.db, options)
  }
  memoriesFromObservations(projectId: ProjectId, observationIds: readonly string[]): Promise<Map<string, string[]>> {
    return read.memoriesFromObservations(this.db, projectId, observationIds)
  }
  recordUsage(memoryIds: readonly string[], day: string): Promise<void> {
    return read.recordUsage(this.db, memoryIds, day)
  }
  usageCounts(memoryIds: readonly string[]): Promise<Map<string, number>> {
    return read.usageCounts(this.db, memoryIds)
  }
  recordInjections(key: InjectionKey, rows: readonly { itemId: string; what: InjectionWhat }[], at: number): Promise<void> {
    return read.recordInjections(this.db, key, rows, at)
  }
  injections(key: InjectionKey): Promise<{ itemId: string; what: InjectionWhat; at: number }[]> {
    return read.injections(this.db, key)
  }

  // The search, graph and vector channels (PgParts.channels).
  searchText: Channels['searchText'] = (options) => this.channels.searchText(options)
  matchCount: Channels['matchCount'] = (options) => this.channels.matchCount(options)
  countDocs: Channels['countDocs'] = (scope) => this.channels.countDocs(scope)
  docsInTimeRange: Channels['docsInTimeRange'] = (options) => this.channels.docsInTimeRange(options)
  docs: Channels['docs'] = (docKeys) => this.channels.docs(docKeys)
  docRoles: Channels['docRoles'] = (docKeys) => this.channels.docRoles(docKeys)
  neighbors: Channels['neighbors'] = (docs, span, visible) => this.channels.neighbors(docs, span, visible)
  entityNames: Channels['entityNames'] = (projectIds) => this.channels.entityNames(projectIds)
  findEntities: Channels['findEntities'] = (scope, refs, maxDocs) => this.channels.findEntities(scope, refs, maxDocs)
  entityMentions: Channels['entityMentions'] = (ids, scope, limit) => this.channels.entityMentions(ids, scope, limit)
  coMentioned: Channels['coMentioned'] = (ids, scope, limit, maxDocs) => this.channels.coMentioned(ids, scope, limit, maxDocs)
  searchEntities: Channels['searchEntities'] = (scope, text, limit) => this.channels.searchEntities(scope, text, limit)
  sampleDocs: Channels['sampleDocs'] = (scope, entityId, limit) => this.channels.sampleDocs(scope, entityId, limit)
  entitiesInDocs: Channels['entitiesInDocs'] = (docKeys, limit) => this.channels.entitiesInDocs(docKeys, limit)
  entitiesById: Channels['entitiesById'] = (ids) => this.channels.entitiesById(ids)
  entityEdges: Channels['entityEdges'] = (ids, docKeys) => this.channels.entityEdges(ids, docKeys)
  vectors: Channels['vectors'] = (space, scope, visible) => this.channels.vectors(space, scope, visible)
  putVectors: Channels['putVectors'] = (space, rows) => this.channels.putVectors(space, rows)
  dropSpace: Channels['dropSpace'] = (space) => this.channels.dropSpace(space)
  docsWithoutVector: Channels['docsWithoutVector'] = (space, scope, limit) => this.channels.docsWithoutVector(space, scope, limit)
  projectTexts: Channels['projectTexts'] = (projectId, limit) => this.channels.projectTexts(projectId, limit)
  getLsaModel: Channels['getLsaModel'] = (projectId) => this.channels.getLsaModel(projectId)
  lsaModelInfo: Channels['lsaModelInfo'] = (projectId) => this.channels.lsaModelInfo(projectId)
  putLsaModel: Channels['putLsaModel'] = (projectId, row) => this.channels.putLsaModel(projectId, row)

  // Lifecycle and administration.
  audit(entry: AuditEntry): Promise<void> {
    return audit(this.db, entry)
  }
  auditLog(limit: number): Promise<AuditEntry[]> {
    return auditLog(this.db, limit)
  }
  scopeCounts(
    projectRoot?: string,
    user?: string | null,
    agent?: AgentName,
  ): Promise<{ events: number; sessions: number; observations: number; memories: number }> {
    return scopeCounts(this.db, projectRoot, user, agent)
  }
  stats(): Promise<StoreStats> {
    return stats(this.db)
  }
  vacuum(): Promise<{ bytesBefore: number; bytesAfter: number }> {
    return vacuum(this.db)
  }
  integrityCheck(): Promise<string> {
    return integrityCheck(this.db)
  }
  withoutLockWait<T>(fn: () => Promise<T>): Promise<T> {
    return this.db.withoutLockWait(fn)
  }
  runExclusive(name: string, fn: () => Promise<void>, options: { turn?: number } = {}): Promise<boolean> {
    return runExclusive(this.db, name, fn, options.turn)
  }
  close(): Promise<void> {
    return this.db.close()
  }
}

/**
 * Opens the PostgreSQL store at `url` (`postgres://user:password@host:5432/database`) with the whole dialect
 * (`PG_PARTS`), migrated on open. See `openPostgresStoreWith` for what it does and throws.
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<Store> {
  return openPostgresStoreWith(url, PG_PARTS, options)
}
