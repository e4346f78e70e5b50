import type { FactOp } from '../core/facts/fact-types.js'
import type { MemoryId, ObservationId, ProjectId, SessionId } from '../core/ids.js'
import type {
  AgentName,
  DerivedObservation,
  EntityRef,
  EventFormat,
  EventInput,
  IndexedText,
  Memory,
  MemoryKind,
  Observation,
  ObservationKind,
  Project,
  Session,
  SessionEffect,
  StepPart,
} from '../core/types.js'
import type { FactStore } from './fact-store.js'
import type { Visibility } from './visibility.js'

/**
 * How close in time (ms) a prompt or assistant message from one capture path must be to the same
 * text from another path of the same session to be the same step (see `Derivation.origin`): 10
 * minutes. A hook's time is when it fired and a transcript record's is when it was written, which
 * are seconds apart; a turn that long would have written its messages in between.
 */
export const CROSS_PATH_WINDOW_MS = 10 * 60_000

/** What one event turns into, computed by capture (observations) and retrieval (index text, entities). */
export interface Derivation {
  /** `part`: which part of a tool call it holds (see `stepPart`), for matching it against another capture path's copy. */
  observations: (DerivedObservation & { index: IndexedText; entities: EntityRef[]; part?: StepPart })[]
  memory?: {
    kind: MemoryKind
    text: string
    index: IndexedText
    entities: EntityRef[]
    flags?: string[]
    /** Same key in the same project = the same memory (its seen count goes up instead). */
    contentKey: string
    /** Same key and kind, other content = a newer version of it (supersedes the current one). */
    subjectKey?: string
    /** The phrase after the subject ("PostgreSQL 14"): memories quoting a superseded value get flagged for review. */
    value?: string
    /** Explicitly replaces this memory id. */
    supersedes?: string
    /** Is this memory seen again (a near duplicate the engine matched). */
    sameAs?: string
    /** Provenance: observation ids it was derived from. */
    sources?: string[]
    /** 0–1: how sure the extraction that derived it was; absent for stated memories. */
    confidence?: number
    /** The agent whose work it came from (consolidation of one agent's sessions); default the event's agent, none for mnemo's own. */
    agent?: AgentName
    /** Match, supersede and flag for review only memories of the same agent (agent isolation); default: any agent's of the user. */
    guardByAgent?: true
  }
  /** Lifecycle changes to memories: pin, unpin, archive, restore. */
  memoryOps?: { op: 'pin' | 'unpin' | 'archive' | 'restore'; id: string }[]
  session?: SessionEffect
  /**
   * The capture path the observations came from: the event's format ('claude-hook',
   * 'claude-transcript', …), or for a folded event the format it was folded from. An observation
   * that another capture path of the same session already stored is not stored again: a tool call
   * by its `sourceRef` when the stored parts hold what it holds (a transcript's input-only call does
   * not stand for a hook's call with its result), a prompt or message by its kind and text within
   * `CROSS_PATH_WINDOW_MS`, one copy per stored one. The copy is recorded (`eventsHaveCopies`):
   * deleting the stored one's event lets the copy in again, as a rebuild would. Hooks and an import
   * of the same session's transcript thus keep one copy of each step. Default: no such check.
   */
  origin?: EventFormat
  /** Fact ledger operations (docs/FACTS.md): declarations, record versions, retractions, deletes. */
  facts?: FactOp[]
}

/** An event as stored in the log. */
export interface StoredEvent extends EventInput {
  seq: number
  receivedAt: number
}

/**
 * Which logged events a governance delete takes: some by sequence number, or
 * a project's (optionally one session's, or those before a time), optionally
 * only one user's (`user`: that user's; `null`: only events with no user;
 * omitted: every user's).
 */
export interface EventFilter {
  seqs?: readonly number[]
  projectRoot?: string
  sessionKey?: string
  /** Only this agent's events (with `sessionKey`: one agent's session). */
  agent?: AgentName
  /** Epoch ms: events before it. */
  before?: number
  user?: string | null
}

/** What identifies a session across re-derivations: its project's root, its agent and its stored key (ids come from its first event). */
export interface StepSession {
  projectRoot: string
  agent: string
  /** The key as stored (namespaced by user). */
  key: string
}

/** Outcome of appending a batch of events. */
export interface AppendResult {
  /** Events newly written to the log. */
  inserted: number
  /** Events whose idempotency key was already in the log (no-ops). */
  duplicates: number
  /** Observations derived from the inserted events and stored. */
  observations: number
  /** Observations not stored because another capture path of their session had stored them (see `Derivation.origin`). */
  covered: number
  /** Per input event, in order: the log sequence number, or `undefined` for a duplicate. */
  seqs: (number | undefined)[]
  /**
   * Per input event, in order: the observations its derivation stored and those another capture path had stored
   * (both 0 for a duplicate). They add up to `observations` and `covered`; an import that appends several files in
   * one batch reports each file's share from them.
   */
  perEvent: { observations: number; covered: number }[]
}

/**
 * A searchable document: an observation or a memory, keyed by its full-text
 * rowid (`docKey`): observations are positive, memories negative.
 */
export interface SearchDoc {
  docKey: number
  type: 'observation' | 'memory'
  id: string
  kind: string
  /** Observation role or speaker; the memory kind for memories. */
  role: string
  projectId: ProjectId
  sessionId: SessionId | undefined
  /** Epoch ms (observation time, or memory creation). */
  ts: number
  text: string
  sourceRef: string | undefined
  flags: string[]
  /** For memories: when it stopped being current, and when it was archived. */
  validTo?: number
  archivedAt?: number
}

/** One entry of the audit log. */
export interface AuditEntry {
  /** Epoch ms. */
  at: number
  /** Who did it: `cli`, `mcp`, `rest`, `hook`, or a user name. */
  actor: string
  /** `forget`, `redact-rescan`, `delete`, … */
  action: string
  /** What it applied to: an id, a project, `*`. */
  target: string
  /** How many items it affected. */
  count: number
  details?: Record<string, unknown>
}

/** One session of one agent, as the agent names it (its own session id), and whose it is (`''`: no user). */
export interface InjectionKey {
  agent: string
  sessionKey: string
  user: string
}

/** What an injection record says: an item was shown, a correction of it was shown, or a file's hints were shown. */
export type InjectionWhat = 'item' | 'correction' | 'file'

/**
 * Whose rows a read sees: the namespace it is confined to (PRODUCT.md: scope =
 * project + agent + user). Every read primitive applies it inside its own
 * query, never to a truncated result.
 */
export interface Scope {
  /** Projects to read; empty or omitted = every project. */
  projectIds?: readonly ProjectId[]
  /**
   * A user name: that user's rows and shared rows (captured with no user).
   * `null`: shared rows only. Omitted: every user's rows — only for a person
   * who asked for all users (the engine always sets it otherwise).
   */
  user?: string | null
  /** An agent: its own rows and rows of no agent (stated by a person, or drawn from several agents). Omitted: every agent's. */
  agent?: AgentName
}

/** A full-text candidate: the document key and its BM25 relevance (higher is better). */
export interface TextMatch {
  docKey: number
  /** Observation role or speaker; the memory kind for memories. */
  role: string
  /** FTS5 bm25() with the column weights, negated so that higher is better. */
  score: number
}

/** Full-text search's request: the scope and which of its documents (`Visibility`, applied inside the query, before `limit`). */
export interface SearchTextOptions extends Scope, Visibility {
  /**
   * What to match: a disjunction of quoted phrases, each optionally a prefix (`"jwt verify" OR "auth.ts" OR "認証"*`),
   * the subset of FTS5 query syntax that `toMatchExpression` writes. Each dialect translates it (SQLite: FTS5 MATCH as
   * is; PostgreSQL: a tsquery of phrases).
   */
  match: string
  sessionId?: SessionId
  /** Most matches returned, best first. */
  limit: number
  /** Column weights for bm25(): [body, parts, meta]. Default [1, 0.5, 0.5]. */
  weights?: readonly [number, number, number]
}

/** An entity of the graph with the number of documents that mention it. */
export interface EntityRow {
  id: number
  type: string
  name: string
  docs: number
}

/** Options of `Store.browseObservations`. */
export interface BrowseObservationsOptions extends Omit<Scope, 'agent'> {
  projectIds: readonly ProjectId[]
  sessionId?: SessionId
  kinds?: readonly ObservationKind[]
  agent?: string
  /** Only rows of events after this sequence number (with `order: 'asc'`). */
  afterSeq?: number
  /** Only rows of events before this sequence number (with `order: 'desc'`). */
  beforeSeq?: number
  order: 'asc' | 'desc'
  limit: number
}

/** Options of `Store.browseMemories`. */
export interface BrowseMemoriesOptions extends Scope {
  projectIds: readonly ProjectId[]
  kinds?: readonly MemoryKind[]
  /** current: valid and not archived; archived; superseded: replaced by a newer version; all. */
  state: 'current' | 'archived' | 'superseded' | 'all'
  offset: number
  limit: number
}

export interface StoreStats {
  events: number
  projects: number
  /** Agents' sessions (mnemo's own bookkeeping sessions left out, as `sessions` lists them). */
  sessions: number
  observations: number
  memories: number
  lastEventAt: number | undefined
  /** Database file size in bytes (0 for in-memory stores). */
  bytes: number
}

/**
 * Derives logged events elsewhere (worker threads) while `EventLog.rebuild` writes the ones before: the store hands
 * over each page of the log as it reads it, and takes the derivations back page by page, in the same order.
 * Synchronous, so a store can use it inside one transaction. Each derivation is the one `rebuild`'s `derive` gives
 * for that event (the same pure function, run on another thread), so the rows written do not depend on it.
 */
export interface DeriveAhead {
  /**
   * Hands over the next page of events, in log order. With `storedPayloads` (the SQLite store's rebuild), the events'
   * `payload` is left undefined and `storedPayloads[i]` holds event i's payload as the SQLite log stores it: the
   * helper decodes it (sqlite-payload.ts `payloadText`, then JSON) before deriving, so the store need not.
   */
  push(events: readonly StoredEvent[], storedPayloads?: readonly (string | Uint8Array)[]): void
  /**
   * The derivations of the oldest page handed over and not taken yet, in its order, waiting for them. An entry is
   * `undefined` where the event could not be derived there (its derivation throws, or the helper failed): the store
   * then calls `derive` itself, which gives the derivation or throws the event's own error.
   */
  shift(): (Derivation | undefined)[]
}

/** One event of an `EventLog.append` batch, with how to derive it. */
export interface AppendItem {
  event: EventInput
  /** The event's derivation, called only when the event is not a duplicate. */
  derive: () => Derivation
  /** When the log received it, epoch ms. Default: the store's clock. */
  receivedAt?: number
  /** Keys of the same delivery in a neighbouring second: stored under one of them, the event is a duplicate. */
  sameAs?: readonly string[]
  /**
   * `event.payload` already in the SQLite log's encoding (its `encodePayload`), made on a derive pool's worker: the
   * SQLite store writes it instead of encoding the payload again; the PostgreSQL store (a JSONB column) ignores it.
   */
  storedPayload?: string | Uint8Array
  /**
   * The texts of `derive()`'s observations, by index, that the SQLite store compresses (`encodeObservationText`),
   * compressed with it on the worker that made the derivation; an entry undefined (a text stored as text) is encoded
   * by the store. The PostgreSQL store ignores it.
   */
  storedTexts?: readonly (Uint8Array | undefined)[]
}

/** The append-only event log, the source of truth (ARCHITECTURE.md): appends with their derivation, reads, governance deletes and tombstones, in-place rewrites, rebuild. */
export interface EventLog {
  /**
   * Appends events to the log and applies their derivations, all in one
   * transaction. An event whose `idemKey` is already stored, or one of whose
   * `sameAs` keys is (the same delivery keyed in a neighbouring second), is
   * skipped (counted in `duplicates`) and its derivation not applied.
   */
  append(batch: readonly AppendItem[]): Promise<AppendResult>
  /** Logged events with `seq > afterSeq`, in order, at most `limit`. */
  readEvents(afterSeq: number, limit: number): Promise<StoredEvent[]>
  /** Logged events with `seq > afterSeq` of one project and user scope, in order, at most `limit` (for export). */
  readScopedEvents(afterSeq: number, limit: number, scope: { projectRoot?: string; user?: string | null }): Promise<StoredEvent[]>
  /** The highest event sequence number in the log (0 when empty). */
  lastEventSeq(): Promise<number>
  /**
   * Deletes every derived row and re-applies `derive` to each logged event in order.
   * @param derivedWith - The derivation version `derive` makes, recorded with the rows (see `derivedWith`).
   * @param ahead - Derives the events on other threads while the store writes (see `DeriveAhead`); the rows written
   *   are the same with it as without. A store may ignore it (the PostgreSQL store does: its writes are awaited).
   */
  rebuild(
    derive: (event: StoredEvent) => Derivation,
    derivedWith?: number,
    ahead?: DeriveAhead,
  ): Promise<{ events: number; observations: number }>
  /** The derivation version the store's rows were made with (1: before versions were kept); undefined when not recorded. */
  derivedWith(): Promise<number | undefined>
  /**
   * Re-derives one session from its events, as `rebuild` would derive it (its rows, full-text
   * entries, entities and the one-copy matching, which never crosses sessions), leaving the rest
   * of the store alone. Returns the observations it derived.
   */
  rederiveSession(session: StepSession, derive: (event: StoredEvent) => Derivation): Promise<number>
  /**
   * Deletes logged events for good (a governance delete): their rows, every
   * row derived from them, and their idempotency keys become tombstones so a
   * re-import never brings them back. Events of mnemo's own operations that
   * name the deleted items go too.
   * @returns How many events were deleted.
   */
  deleteEvents(filter: EventFilter): Promise<number>
  /** Ids of the observations derived from the events a `deleteEvents` filter would delete. */
  observationIdsOfEvents(filter: EventFilter & { projectRoot: string }): Promise<string[]>
  /** Whether an observation of these events stands for a copy another capture path carried and that was not stored (see `Derivation.origin`). */
  eventsHaveCopies(seqs: readonly number[]): Promise<boolean>
  /**
   * Ids of the observations of a session through which a capture path other than `origin` recorded
   * the same step: the same `sourceRef`, or (without one) the same kind and text within
   * `CROSS_PATH_WINDOW_MS` of `ts`. The session is named by what identifies it (see `StepSession`),
   * not its id.
   */
  stepRecords(session: StepSession, origin: string, step: { sourceRef?: string; kind: string; text: string; ts: number }): Promise<string[]>
  /** An observation's capture path (undefined for an older mnemo's row) and session identity; undefined for an unknown id. */
  stepOf(observationId: string): Promise<{ origin: string | undefined; session: StepSession } | undefined>
  /** The log sequence number of the event an observation or memory was derived from. */
  sourceEventOf(id: string): Promise<number | undefined>
  /**
   * Rewrites stored event payloads in place, in one transaction: `fn` returns
   * a new payload or `undefined` to keep the event as it is.
   * @returns How many events changed.
   */
  rewritePayloads(fn: (payload: unknown) => unknown): Promise<number>
  /**
   * Rewrites logged events older than `before` (event time, epoch ms) in
   * place, in one transaction: `fold` returns a new format and payload, or
   * undefined to keep the event. Derived rows are not touched (a fold must
   * derive the same rows). Optionally only one project's events. SQLite, which
   * stores payloads compressed, also skips a fold whose stored bytes would not
   * shrink.
   * @returns How many events changed, and their payload bytes before and after.
   */
  foldEvents(
    options: { before: number; projectRoot?: string; user?: string | null },
    fold: (event: StoredEvent) => { format: EventFormat; payload: unknown } | undefined,
  ): Promise<{ events: number; bytesBefore: number; bytesAfter: number }>
  /** Tombstones (deleted events' idempotency keys), optionally of one project. */
  tombstones(projectRoot?: string): Promise<{ idemKey: string; at: number; projectRoot: string | undefined }[]>
  /** Adds tombstones (from an export); existing ones are kept. */
  putTombstones(rows: readonly { idemKey: string; at: number; projectRoot: string | undefined }[]): Promise<void>
}

/** Reads of the rows derived from the log: projects, sessions, observations, memories and their versions, and what was shown or used. */
export interface DerivedReads {
  getObservation(id: ObservationId | string): Promise<Observation | undefined>
  getMemory(id: MemoryId | string): Promise<Memory | undefined>
  getSession(id: SessionId | string): Promise<Session | undefined>
  getProject(id: ProjectId | string): Promise<Project | undefined>
  /** The memory derived from the logged event with this idempotency key, if any. */
  memoryByIdemKey(idemKey: string): Promise<Memory | undefined>
  /**
   * The current memory of a project and user (undefined = shared) with this content key, if any; with `agent`
   * given, only that agent's (null: one of no agent), as the write guard matches under agent isolation.
   */
  currentMemoryByContent(
    projectRoot: string,
    contentKey: string,
    user: string | undefined,
    agent?: AgentName | null,
  ): Promise<Memory | undefined>
  /** Every memory of a project, all versions, archived included, oldest first. */
  allMemories(projectId: ProjectId): Promise<Memory[]>
  /** A memory and every version before and after it, oldest first. */
  memoryHistory(id: string): Promise<Memory[]>
  /**
   * Projects by name then root. With a user or agent in `scope`, only those the reader has
   * something in: an agent's session or a memory it may see (another user's project is not
   * named to them).
   */
  listProjects(scope?: Omit<Scope, 'projectIds'>): Promise<Project[]>
  /** Sessions newest first (by last event), from `offset` (default 0), leaving out sessions of `excludeAgent`. */
  listSessions(options: Scope & { limit: number; offset?: number; excludeAgent?: string }): Promise<Session[]>
  /** A session's observations in time order. */
  sessionObservations(sessionId: SessionId, limit: number): Promise<Observation[]>
  /** A session's observations in time order from `offset`, at most `limit`. */
  sessionObservationsPage(sessionId: SessionId, offset: number, limit: number): Promise<Observation[]>
  /** The 0-based place of an observation in its session's time order, or undefined when it is not in that session. */
  observationPosition(sessionId: SessionId, observationId: string): Promise<number | undefined>
  /** Current, unarchived memories of the scope, pinned first then newest. */
  listMemories(options: Scope & { limit: number }): Promise<Memory[]>
  /**
   * A page of observations of these projects with the agent of their session,
   * filtered by session, kinds and agent. `order: 'desc'` pages newest first
   * with `beforeSeq`; `'asc'` tails the log with `afterSeq` (event sequence
   * numbers, so rows written by other processes are seen in log order).
   */
  browseObservations(options: BrowseObservationsOptions): Promise<(Observation & { agent: AgentName })[]>
  /** A page of memories of these projects (all versions) with the total matching, pinned first then newest. */
  browseMemories(options: BrowseMemoriesOptions): Promise<{ memories: Memory[]; total: number }>
  /** For each observation id, the ids of the memories whose provenance names it. */
  memoriesFromObservations(projectId: ProjectId, observationIds: readonly string[]): Promise<Map<string, string[]>>
  /**
   * Records that memories were used today (context, show); once per memory per day. Best effort: while another
   * process holds the write lock it records nothing rather than make the read wait.
   */
  recordUsage(memoryIds: readonly string[], day: string): Promise<void>
  /** Days each memory was used, for the retention score. */
  usageCounts(memoryIds: readonly string[]): Promise<Map<string, number>>
  /** Records items shown to one agent session (ignoring ones already recorded). */
  recordInjections(key: InjectionKey, rows: readonly { itemId: string; what: InjectionWhat }[], at: number): Promise<void>
  /** Everything recorded as shown to one agent session, oldest first. */
  injections(key: InjectionKey): Promise<{ itemId: string; what: InjectionWhat; at: number }[]>
}

/** The keyword and time channels of recall, and the documents they return: every read filters by scope inside its own query. */
export interface SearchIndex {
  /** Full-text search, scope-filtered inside the query. */
  searchText(options: SearchTextOptions): Promise<TextMatch[]>
  /** Documents of the scope matching an FTS5 expression (current memories only), counted up to `limit` (a count of `limit` means at least that many). */
  matchCount(options: Scope & { match: string; limit: number }): Promise<number>
  /** Number of documents (observations and memories) in the scope. */
  countDocs(scope: Scope): Promise<number>
  /**
   * Keys of documents whose time is in [from, to), oldest first, scope-filtered inside the query, and with `visible`
   * only the documents it lets recall return (see `Visibility`; absent: every document of the scope).
   */
  docsInTimeRange(
    options: Scope & { sessionId?: SessionId; from: number; to: number; limit: number; newestFirst?: boolean; visible?: Visibility },
  ): Promise<number[]>
  /** Documents by key, in the order asked; unknown keys are left out. */
  docs(docKeys: readonly number[]): Promise<SearchDoc[]>
  /**
   * The role of documents by key, as `docs` gives it (`SearchDoc.role`: an observation's role, a memory's kind),
   * without reading their text; unknown keys are left out. For a step that needs only the roles of many documents
   * (the keyword channel's neighbours, ~140 a recall).
   */
  docRoles(docKeys: readonly number[]): Promise<Map<number, string>>
  /**
   * For each observation key, the keys of up to `span` observations before
   * and after it in its session (time order; nearest first). Memory keys get none.
   * With `visible`, only observations it lets recall return are neighbours (absent: every observation).
   */
  neighbors(
    docs: readonly { docKey: number; sessionId: SessionId | undefined; ts: number }[],
    span: number,
    visible?: Visibility,
  ): Promise<Map<number, { prev: number[]; next: number[] }>>
}

/** The entity graph: entities named in documents, their mentions and co-mentions (the graph channel and the viewer's graph). */
export interface GraphIndex {
  /** Lowercase names of the `name` entities of these projects (all projects when empty). */
  entityNames(projectIds: readonly ProjectId[]): Promise<string[]>
  /**
   * The stored entities matching `refs` in the scope's projects, with how many of the scope's documents mention each
   * (unmentioned ones left out). With `maxDocs`, a count over it is reported as `maxDocs + 1` (counting stops there).
   */
  findEntities(
    scope: Scope,
    refs: readonly EntityRef[],
    maxDocs?: number,
  ): Promise<{ id: number; type: string; name: string; docs: number }[]>
  /**
   * Documents mentioning any of `entityIds`: (entity, document) pairs, scope-filtered, and with `visible` only of the
   * documents it lets recall return (see `Visibility`; absent: every document of the scope), inside the query.
   */
  entityMentions(
    entityIds: readonly number[],
    scope: Scope & { sessionId?: SessionId; visible?: Visibility },
    limit: number,
  ): Promise<{ entityId: number; docKey: number }[]>
  /**
   * The `limit` entities sharing most documents of the scope with `entityIds`, with the number of shared documents and
   * their own document count (with `maxDocs`, a count over it is reported as `maxDocs + 1`).
   */
  coMentioned(
    entityIds: readonly number[],
    scope: Scope,
    limit: number,
    maxDocs?: number,
  ): Promise<{ id: number; shared: number; docs: number }[]>
  /** Entities of the scope's projects mentioned in its documents whose name contains `text` (case-insensitive), exact matches first, then most mentioned. */
  searchEntities(scope: Scope & { projectIds: readonly ProjectId[] }, text: string, limit: number): Promise<EntityRow[]>
  /**
   * Keys of the newest `limit` documents of these projects that mention
   * `entityId` (observations newest first, then memories), or of any newest
   * observations without one: the sample the viewer's graph is drawn from.
   */
  sampleDocs(scope: Scope & { projectIds: readonly ProjectId[] }, entityId: number | undefined, limit: number): Promise<number[]>
  /** Entities mentioned in `docKeys`, most mentioned there first, with that count (`shared`). */
  entitiesInDocs(docKeys: readonly number[], limit: number): Promise<{ id: number; shared: number }[]>
  /** Entities by id (unknown ids left out), with their document counts over the whole store. */
  entitiesById(ids: readonly number[]): Promise<EntityRow[]>
  /** Co-mention edges among `ids` within `docKeys`: pairs that share documents there, with how many. */
  entityEdges(ids: readonly number[], docKeys: readonly number[]): Promise<{ source: number; target: number; weight: number }[]>
}

/** The vector channel: stored vectors per embedding space, and the builtin LSA model per project. */
export interface VectorIndex {
  /**
   * All vectors of a space among the scope's documents, as (key, vector) pairs; with `visible`, of the documents it
   * lets recall return only (see `Visibility`; absent: every document of the scope).
   */
  vectors(space: string, scope: Scope, visible?: Visibility): Promise<{ docKey: number; vec: Float32Array }[]>
  /** Stores vectors of a space (replacing existing ones). */
  putVectors(space: string, rows: readonly { docKey: number; vec: Float32Array }[]): Promise<void>
  /** Deletes every vector of a space. */
  dropSpace(space: string): Promise<void>
  /** Keys and texts of the scope's documents that have no vector in `space`, oldest first. */
  docsWithoutVector(space: string, scope: Scope, limit: number): Promise<{ docKey: number; text: string }[]>
  /** Texts of a project's documents, newest first (for fitting the builtin model). */
  projectTexts(projectId: ProjectId, limit: number): Promise<string[]>
  /** The stored builtin model of a project. */
  getLsaModel(projectId: ProjectId): Promise<{ space: string; docCount: number; builtAt: number; model: Uint8Array } | undefined>
  /** The stored LSA model's space, document count and fit time, without its bytes (what a cache checks on every search). */
  lsaModelInfo(projectId: ProjectId): Promise<{ space: string; docCount: number; builtAt: number } | undefined>
  putLsaModel(projectId: ProjectId, row: { space: string; docCount: number; builtAt: number; model: Uint8Array }): Promise<void>
}

/** Lifecycle and administration: the audit log, counts, maintenance, integrity, locking, closing. */
export interface StoreAdmin {
  /** Appends an audit entry. */
  audit(entry: AuditEntry): Promise<void>
  /** The last `limit` audit entries, newest first. */
  auditLog(limit: number): Promise<AuditEntry[]>
  /** Row counts of one project (or the whole store), user scope and agent (an agent's rows and agent-less ones): events, sessions, observations, memories (all versions). */
  scopeCounts(
    projectRoot?: string,
    user?: string | null,
    agent?: AgentName,
  ): Promise<{ events: number; sessions: number; observations: number; memories: number }>
  stats(): Promise<StoreStats>
  /** Rewrites the database without free space (SQLite VACUUM, PostgreSQL VACUUM FULL of mnemo's tables). @returns Its size in bytes before and after. */
  vacuum(): Promise<{ bytesBefore: number; bytesAfter: number }>
  /** Runs the dialect's integrity check (SQLite `integrity_check`; PostgreSQL: the derived rows against the log); returns 'ok' or the problems found. */
  integrityCheck(): Promise<string>
  /**
   * Runs `fn` with no wait for another process's write lock: a write inside it that meets the lock fails at once
   * (`STORE_UNAVAILABLE`, "database is locked") instead of waiting the busy timeout. Reads never wait (WAL).
   */
  withoutLockWait<T>(fn: () => Promise<T>): Promise<T>
  /**
   * Runs the job `name` here unless another process on this database is running it now, or (with `options.turn`)
   * has run it for that turn or a later one, so that the background jobs of several server replicas on one database
   * run once per turn. PostgreSQL: a session advisory lock (released with the connection if the process dies) and the
   * last turn in `store_meta`; SQLite, whose file has one server: the same within this process. The turn is recorded
   * when `fn` resolves (a run that fails may be retried in its turn).
   * @param options.turn - A number that grows with time (the server's: epoch ms / interval, floored). Default: none,
   *   only "not while another runs it".
   * @returns Whether `fn` ran here; rejects as `fn` does.
   */
  runExclusive(name: string, fn: () => Promise<void>, options?: { turn?: number }): Promise<boolean>
  /**
   * SQLite only (a kept context block, runtime/context-cache.ts, is checked against the database file): a reading that
   * changes whenever another connection commits (`PRAGMA data_version`). Two equal readings of one connection mean no
   * other connection wrote in between.
   */
  otherWrites?(): number
  /**
   * SQLite only: moves everything the WAL holds into the database file and empties the WAL (a TRUNCATE checkpoint), so
   * that the file alone, until its next write, holds the whole store. Returns the database file's path when that was
   * done, undefined when another connection kept it from finishing (a reader on an older snapshot, a writer).
   */
  settle?(): string | undefined
  /** SQLite only: the agent session key of every session of the project at `projectRoot` (any agent or user), in no order, repeats included. */
  sessionKeys?(projectRoot: string): Promise<string[]>
  close(): Promise<void>
}

/**
 * The storage port: everything the engine needs from a database, split by concern and asynchronous so that a
 * network database (PostgreSQL) implements it as well as the embedded one (SQLite). One implementation per dialect
 * (`storage/sqlite`, `storage/postgres`), each held to the same contract suite. Writes are transactional: a rejected
 * promise leaves the store unchanged.
 */
export interface Store extends EventLog, DerivedReads, SearchIndex, GraphIndex, VectorIndex, StoreAdmin {
  /** Which dialect implements it. */
  readonly dialect: 'sqlite' | 'postgres'
  /** The typed fact ledger: views derived from fact events (see `Derivation.facts`), and their queries. */
  readonly facts: FactStore
}
