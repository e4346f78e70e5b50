import { AsyncLocalStorage } from 'node:async_hooks'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import Database from 'better-sqlite3'
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
  DeriveAhead,
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
import { migrate, refuseNewerSchema } from './migrations.js'
import { isLockError, SqliteDb, wrap } from './sqlite-db.js'
import { createSqliteFacts } from './sqlite-facts.js'
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
import { injections, recordInjections } from './sqlite-search.js'
import { append, rebuild, rederiveSession } from './sqlite-write.js'
import { sqliteChannels } from './sqlite-channels.js'

// better-sqlite3 is imported, not required: the bundles (scripts/build-bundles.mjs) inline its JavaScript (12 CommonJS
// files, ~10 ms CPU of every process that opens the store when required from node_modules) and the addon is loaded
// from the path below. The ES modules tsc emits pay an export scan (cjs-module-lexer) of two small files instead.
const requireCjs = createRequire(import.meta.url)

/**
 * The path of the driver's native addon, named to the driver (`nativeBinding`): where its install puts it
 * (`build/Release/better_sqlite3.node`), which skips the `bindings` package's search (loading it and trying its
 * candidate paths: ~3 ms CPU per process); else where `bindings` finds it below the driver's folder (asked with that
 * folder: inlined into a bundle, the driver's own search would start from the bundle's folder, not its own);
 * undefined when neither finds it, and the driver searches as it does by default.
 */
function addonPath(): string | undefined {
  try {
    const root = path.dirname(requireCjs.resolve('better-sqlite3/package.json'))
    const file = path.join(root, 'build', 'Release', 'better_sqlite3.node')
    if (existsSync(file)) return file
    const bindings = createRequire(path.join(root, 'package.json'))('bindings') as (o: object) => string
    return bindings({ bindings: 'better_sqlite3.node', module_root: root, path: true })
  } catch {
    return undefined
  }
}

type Channels = SearchIndex & GraphIndex & VectorIndex

/** Page size of a new database file, bytes (see `openSqliteStore`). */
const NEW_FILE_PAGE_SIZE = 16_384

/** Set (true) for the calls made inside `withoutLockWait`'s function, through its awaits (see `SqliteStore.withoutLockWait`). */
const noLockWait = new AsyncLocalStorage<boolean>()

interface SqliteStoreOptions {
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
  /**
   * Most memory SQLite's page cache of this connection may hold, KiB (`PRAGMA cache_size = -N`), ≥ 0. Default: SQLite's
   * as built into better-sqlite3 (16,000 KiB). A long-running server takes less (`mnemo serve`: docs/RECALL-LATENCY.md).
   */
  pageCacheKib?: number
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
  let db: Database.Database | undefined
  try {
    const nativeBinding = addonPath()
    db = new Database(options.path, { readonly: options.readonly ?? false, ...(nativeBinding ? { nativeBinding } : {}) })
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`)
    if (!options.readonly) {
      // A new file gets 16 KiB pages (SQLite's default is 4 KiB): rows of 1–6 KB (payloads, tool outputs) pack into them
      // with less left over, 7% fewer bytes per observation at 100k (docs/STORAGE.md). Set before WAL and the first
      // table, the only time it can be; an existing file keeps its page size.
      if ((db.pragma('page_count', { simple: true }) as number) === 0) db.pragma(`page_size = ${NEW_FILE_PAGE_SIZE}`)
      db.pragma('journal_mode = WAL')
      db.pragma('synchronous = FULL')
    }
    db.pragma('foreign_keys = ON')
    if (options.pageCacheKib !== undefined) db.pragma(`cache_size = ${-Math.max(0, Math.floor(options.pageCacheKib))}`)
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
 * The SQLite implementation of the Store port; each method's body lives in the module of its concern (sqlite-write,
 * -read, -log; the search, graph and vector channels' in sqlite-channels.ts, over -search and -graph). better-sqlite3 is synchronous: each method runs its statements synchronously and
 * returns a settled promise, so one call's transaction never interleaves with another's.
 */
class SqliteStore implements Store {
  readonly dialect = 'sqlite' as const
  private readonly s: SqliteDb
  readonly facts: FactStore

  // The search, graph and vector channels (sqlite-channels.ts).
  private readonly channels: Channels
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

  constructor(db: Database.Database, path: string, now: () => number) {
    this.s = new SqliteDb(db, path, now)
    this.facts = createSqliteFacts(this.s)
    this.channels = sqliteChannels(this.s, (fn) => this.write(fn))
  }

  async append(batch: readonly AppendItem[]): Promise<AppendResult> {
    return this.write(() => append(this.s, batch))
  }

  async readEvents(afterSeq: number, limit: number): Promise<StoredEvent[]> {
    return readEvents(this.s, afterSeq, limit)
  }

  async rebuild(
    derive: (event: StoredEvent) => Derivation,
    derivedWith?: number,
    ahead?: DeriveAhead,
  ): Promise<{ events: number; observations: number }> {
    return this.write(() => rebuild(this.s, derive, derivedWith, ahead))
  }

  async derivedWith(): Promise<number | undefined> {
    // A store opened read-only is not migrated: before schema 7 it has no store_meta, and its rows are of derivation 1.
    const hasMeta = this.s.stmt("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'store_meta'").get() !== undefined
    if (!hasMeta) return this.s.stmt('SELECT 1 FROM events LIMIT 1').get() !== undefined ? 1 : undefined
    const value = this.s.stmt("SELECT value FROM store_meta WHERE key = 'derived_with'").pluck().get() as string | undefined
    if (value === undefined) return undefined
    // A value that is no version (edited by hand, damaged) says nothing about the rows: assume the oldest, so a rebuild is offered.
    return /^[1-9]\d{0,5}$/.test(value) ? Number(value) : 1
  }

  async rederiveSession(session: StepSession, derive: (event: StoredEvent) => Derivation): Promise<number> {
    return this.write(() => rederiveSession(this.s, session, derive))
  }

  async recordInjections(key: InjectionKey, rows: readonly { itemId: string; what: InjectionWhat }[], at: number): Promise<void> {
    return this.write(() => recordInjections(this.s, key, rows, at))
  }

  async injections(key: InjectionKey): Promise<{ itemId: string; what: InjectionWhat; at: number }[]> {
    return injections(this.s, key)
  }

  async getObservation(id: ObservationId | string): Promise<Observation | undefined> {
    return getObservation(this.s, id)
  }

  async getMemory(id: MemoryId | string): Promise<Memory | undefined> {
    return getMemory(this.s, id)
  }

  async memoryByIdemKey(idemKey: string): Promise<Memory | undefined> {
    return memoryByIdemKey(this.s, idemKey)
  }

  async currentMemoryByContent(
    projectRoot: string,
    contentKey: string,
    user: string | undefined,
    agent?: AgentName | null,
  ): Promise<Memory | undefined> {
    return currentMemoryByContent(this.s, projectRoot, contentKey, user, agent)
  }

  async recordUsage(memoryIds: readonly string[], day: string): Promise<void> {
    // Reinforcement is a side effect of reading: a store opened read-only is read without it.
    if (this.s.db.readonly) return
    try {
      this.s.withoutLockWait(() => recordUsage(this.s, memoryIds, day))
    } catch (error) {
      // A day's count missed while another process writes costs a little reinforcement; making the read wait costs the reader.
      if (!isLockError(error)) throw error
    }
  }

  /**
   * The no-wait window belongs to `fn`'s own calls, not to the connection for as long as `fn` is pending: while `fn`
   * awaits, another caller of this store (a request of `mnemo serve`) runs, and its writes must wait the busy timeout as
   * before. So the window is carried by an AsyncLocalStorage context through `fn`'s awaits, and each write method that
   * runs in it sets the timeout to 0 around its own synchronous statement (`write`), where nothing else can interleave.
   */
  async withoutLockWait<T>(fn: () => Promise<T>): Promise<T> {
    return noLockWait.run(true, fn)
  }

  /** Runs a synchronous write, with no wait for another process's lock when called inside `withoutLockWait`. */
  private write<T>(fn: () => T): T {
    return noLockWait.getStore() === true ? this.s.withoutLockWait(fn) : fn()
  }

  async usageCounts(memoryIds: readonly string[]): Promise<Map<string, number>> {
    return usageCounts(this.s, memoryIds)
  }

  async allMemories(projectId: ProjectId): Promise<Memory[]> {
    return allMemories(this.s, projectId)
  }

  async memoryHistory(id: string): Promise<Memory[]> {
    return memoryHistory(this.s, id)
  }

  async observationIdsOfEvents(filter: EventFilter & { projectRoot: string }): Promise<string[]> {
    return observationIdsOfEvents(this.s, filter)
  }

  async eventsHaveCopies(seqs: readonly number[]): Promise<boolean> {
    return eventsHaveCopies(this.s, seqs)
  }

  async stepRecords(
    session: StepSession,
    origin: string,
    step: { sourceRef?: string; kind: string; text: string; ts: number },
  ): Promise<string[]> {
    return stepRecords(this.s, session, origin, step)
  }

  async stepOf(observationId: string): Promise<{ origin: string | undefined; session: StepSession } | undefined> {
    return stepOf(this.s, observationId)
  }

  async sourceEventOf(id: string): Promise<number | undefined> {
    return sourceEventOf(this.s, id)
  }

  async deleteEvents(filter: EventFilter): Promise<number> {
    return this.write(() => deleteEvents(this.s, filter))
  }

  async getSession(id: SessionId | string): Promise<Session | undefined> {
    return getSession(this.s, id)
  }

  async getProject(id: ProjectId | string): Promise<Project | undefined> {
    return getProject(this.s, id)
  }

  async listProjects(scope: Omit<Scope, 'projectIds'> = {}): Promise<Project[]> {
    return listProjects(this.s, scope)
  }

  async listSessions(options: Scope & { limit: number; offset?: number; excludeAgent?: string }): Promise<Session[]> {
    return listSessions(this.s, options)
  }

  async sessionObservations(sessionId: SessionId, limit: number): Promise<Observation[]> {
    return sessionObservations(this.s, sessionId, limit)
  }

  async listMemories(options: Scope & { limit: number }): Promise<Memory[]> {
    return listMemories(this.s, options)
  }

  async browseObservations(options: BrowseObservationsOptions): Promise<(Observation & { agent: AgentName })[]> {
    return browseObservations(this.s, options)
  }

  async lastEventSeq(): Promise<number> {
    return lastEventSeq(this.s)
  }

  async sessionObservationsPage(sessionId: SessionId, offset: number, limit: number): Promise<Observation[]> {
    return sessionObservationsPage(this.s, sessionId, offset, limit)
  }

  async observationPosition(sessionId: SessionId, observationId: string): Promise<number | undefined> {
    return observationPosition(this.s, sessionId, observationId)
  }

  async browseMemories(options: BrowseMemoriesOptions): Promise<{ memories: Memory[]; total: number }> {
    return browseMemories(this.s, options)
  }

  async memoriesFromObservations(projectId: ProjectId, observationIds: readonly string[]): Promise<Map<string, string[]>> {
    return memoriesFromObservations(this.s, projectId, observationIds)
  }

  async scopeCounts(
    projectRoot?: string,
    user?: string | null,
    agent?: AgentName,
  ): Promise<{ events: number; sessions: number; observations: number; memories: number }> {
    return scopeCounts(this.s, projectRoot, user, agent)
  }

  async readScopedEvents(afterSeq: number, limit: number, scope: { projectRoot?: string; user?: string | null }): Promise<StoredEvent[]> {
    return readScopedEvents(this.s, afterSeq, limit, scope)
  }

  async stats(): Promise<StoreStats> {
    return stats(this.s)
  }

  async rewritePayloads(fn: (payload: unknown) => unknown): Promise<number> {
    return this.write(() => rewritePayloads(this.s, fn))
  }

  async foldEvents(
    options: { before: number; projectRoot?: string; user?: string | null },
    fold: (event: StoredEvent) => { format: EventFormat; payload: unknown } | undefined,
  ): Promise<{ events: number; bytesBefore: number; bytesAfter: number }> {
    return this.write(() => foldEvents(this.s, options, fold))
  }

  async vacuum(): Promise<{ bytesBefore: number; bytesAfter: number }> {
    return this.write(() => vacuum(this.s))
  }

  async tombstones(projectRoot?: string): Promise<{ idemKey: string; at: number; projectRoot: string | undefined }[]> {
    return tombstones(this.s, projectRoot)
  }

  async putTombstones(rows: readonly { idemKey: string; at: number; projectRoot: string | undefined }[]): Promise<void> {
    return this.write(() => putTombstones(this.s, rows))
  }

  async audit(entry: AuditEntry): Promise<void> {
    return this.write(() => audit(this.s, entry))
  }

  async auditLog(limit: number): Promise<AuditEntry[]> {
    return auditLog(this.s, limit)
  }

  async integrityCheck(): Promise<string> {
    return integrityCheck(this.s)
  }

  /** Jobs running in this process (`runExclusive`): one SQLite file has one server, so exclusion within it suffices. */
  private readonly running = new Set<string>()

  async runExclusive(name: string, fn: () => Promise<void>, options: { turn?: number } = {}): Promise<boolean> {
    if (this.running.has(name)) return false
    const key = `job:${name}`
    const turn = options.turn
    if (turn !== undefined) {
      const last = this.s.guard('read job turn', () => this.s.stmt('SELECT value FROM store_meta WHERE key = ?').pluck().get(key)) as
        | string
        | undefined
      if (last !== undefined && Number(last) >= turn) return false
    }
    this.running.add(name)
    try {
      await fn()
      if (turn !== undefined)
        this.write(() =>
          this.s.guard('record job turn', () =>
            this.s
              .stmt('INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value')
              .run(key, String(turn)),
          ),
        )
      return true
    } finally {
      this.running.delete(name)
    }
  }

  otherWrites(): number {
    return this.s.guard('data version', () => this.s.otherCommits())
  }

  settle(): string | undefined {
    if (this.s.path === ':memory:' || this.s.db.readonly) return undefined
    try {
      // [busy, frames in the WAL, frames checkpointed]: done only when nothing kept it busy and the WAL is now empty.
      const [row] = this.s.withoutLockWait(() => this.s.db.pragma('wal_checkpoint(TRUNCATE)')) as { busy: number; log: number }[]
      return row !== undefined && row.busy === 0 && row.log === 0 ? this.s.db.name : undefined
    } catch (error) {
      if (isLockError(error)) return undefined
      throw wrap(error, 'checkpoint', this.s.path)
    }
  }

  async sessionKeys(projectRoot: string): Promise<string[]> {
    return this.s.guard(
      'list session keys',
      () =>
        this.s
          .stmt('SELECT s.session_key FROM sessions s JOIN projects p ON p.id = s.project_id WHERE p.root = ?')
          .pluck()
          .all(projectRoot) as string[],
    )
  }

  async close(): Promise<void> {
    if (this.s.db.open) this.s.db.close()
  }
}
