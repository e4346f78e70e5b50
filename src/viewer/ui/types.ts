/**
 * The JSON shapes the viewer reads from `mnemo serve` (see src/engine/views.ts
 * for the server's side). Times are ISO-8601 strings; absent values are `null`.
 */

export interface Observation {
  id: string
  kind: string
  role: string
  project: string | null
  projectId: string
  sessionId: string
  time: string
  tool: string | null
  files: string[]
  sourceRef: string | null
  flags: string[]
  text: string
  /** On list routes. */
  agent?: string
  /** On session pages: the memories derived from this observation. */
  derivedMemories?: string[]
}

export interface Memory {
  id: string
  kind: string
  project: string | null
  projectId: string
  createdAt: string
  seenCount: number
  flags: string[]
  text: string
  validFrom: string
  validTo: string | null
  supersedes: string | null
  supersededBy: string | null
  review: string | null
  pinned: boolean
  archivedAt: string | null
  sources: string[]
  /** 0–1 for a derived memory; null when stated, or for a summary or procedure. */
  confidence: number | null
}

export interface Session {
  id: string
  project: string | null
  projectId: string
  agent: string
  sessionKey: string
  startedAt: string
  lastEventAt: string
  endedAt: string | null
  title: string | null
  observations: number
}

interface ChannelRank {
  rank: number
  score: number
}

export interface Hit {
  id: string
  type: 'observation' | 'memory'
  kind: string
  project: string
  projectId: string
  sessionId: string | null
  time: string
  score: number
  snippet: string
  sourceRef: string | null
  flags: string[]
  channels?: Record<string, ChannelRank>
  viaNeighbor?: boolean
}

export interface RecallResult {
  query: string
  hits: Hit[]
  warnings: string[]
}

interface Job {
  name: string
  everyMinutes: number
  lastRunAt: string | null
  nextRunAt: string | null
  running: boolean
  lastResult: string | null
  lastError: string | null
}

export interface Status {
  home: string
  database: string
  counts: { events: number; projects: number; sessions: number; observations: number; memories: number }
  bytes: number
  lastCaptureAt: string | null
  /** The one with the latest activity first. */
  projects: { name: string; root: string; lastActivityAt?: string | null }[]
  /** Recall channels; only those `on` are ticked on the Search screen, as the CLI uses them. */
  channels?: { name: string; weight: number; on: boolean }[]
  spool: { pending: number; bad: number }
  errors: { at: string; where: string; code: string; message: string }[]
  server: { version: string; pid: number; startedAt: string }
  jobs?: Job[]
}

export interface ObservationList {
  observations: Observation[]
  /** Pass as `before` for the next (older) page; null at the end. */
  nextBefore?: number | null
  total?: number
}

export interface SessionList {
  sessions: Session[]
  total?: number
}

export interface SessionPage {
  session: Session
  observations: Observation[]
  total: number
  offset: number
  /** With `?at=obs_…`: that observation's 0-based place in the session. */
  position: number | null
}

export interface MemoryList {
  memories: Memory[]
  total: number
}

export interface MemoryHistory {
  /** Oldest → newest; includes the memory asked for. */
  chain: Memory[]
  sources: Observation[]
}

export interface Entity {
  id: number
  type: string
  name: string
  docs: number
}

export interface GraphEdge {
  source: number
  target: number
  weight: number
}

interface Mention {
  id: string
  type: 'observation' | 'memory'
  kind: string
  snippet: string
  time: string
  sessionId: string | null
}

export interface GraphResult {
  center: Entity | null
  nodes: Entity[]
  edges: GraphEdge[]
  mentions: Mention[]
}

export interface ContextBlock {
  project: string
  text: string
  tokens: number
  budgetTokens: number
  memoryIds: string[]
  sessionIds: string[]
  omitted: number
}

export interface Forgotten {
  forgotten: { id: string; type: 'observation' | 'memory'; events: number }
}

/** Observation kinds, in the order the filters list them. */
export const OBSERVATION_KINDS = ['prompt', 'message', 'reasoning', 'tool', 'tool_result', 'error', 'summary'] as const
/** Memory kinds: four semantic, one episodic. */
export const MEMORY_KINDS = ['decision', 'fact', 'preference', 'lesson', 'summary', 'procedure'] as const
/** Agents mnemo captures from (more may appear in the data). */
export const KNOWN_AGENTS = ['claude-code', 'codex', 'gemini', 'cursor'] as const
/** Recall channels (mirrors RECALL_CHANNELS in core/schemas.ts). */
export const RECALL_CHANNELS = ['bm25', 'time', 'graph', 'vector', 'embedding'] as const

/** A fact field's value as stored: scalars, lists of scalars, or null (see core/facts/fact-types.ts). */
export type FactValue = string | number | boolean | null | (string | number | boolean)[]

/** A field of a fact collection. */
export interface FactField {
  name: string
  type: string
  description?: string
  currency?: string
  values?: string[]
  items?: string
  collection?: string
  synonyms?: string[]
}

/** A fact collection as GET /v1/facts/schema lists it. */
export interface FactCollection {
  name: string
  description?: string
  fields: FactField[]
  identity: string[]
  timeField?: string
  records: number
  from?: string
  to?: string
  examples: Record<string, FactValue[]>
}

export interface FactSchema {
  collections: FactCollection[]
}

/** A fact record (a version of one). Times here are epoch ms, as the fact routes give them. */
export interface FactRecord {
  id: string
  collection: string
  values: Record<string, FactValue>
  status: string
  validFrom?: number
  validTo?: number
  retractedAt?: number
  supersededAt?: number
  recordedAt: number
  version: number
  provenance: { source: string; observation?: string; session?: string; quote?: string; file?: string; line?: number }
  identity?: string
}

export interface FactVersion extends FactRecord {
  action: 'assert' | 'retract'
}

export const FACT_LIST_STATES = ['current', 'retracted', 'superseded', 'deleted'] as const
export type FactListState = (typeof FACT_LIST_STATES)[number]

/** A deleted record: only its id and when are kept. */
interface FactDeleted {
  id: string
  deletedAt: number
  text: string
}

/** GET /v1/facts/collections/:name/records. */
export interface FactList {
  collection: string
  state: FactListState
  records: FactRecord[]
  deleted: FactDeleted[]
  total: number
  offset: number
}

/** GET /v1/facts/records/:id. */
export type FactShow = { record: FactRecord; history: FactVersion[] } | { deleted: FactDeleted & { collection: string } }

/** GET /v1/facts/state/:key: a dependent fact's answer and what depends on it. */
export interface FactState {
  answer: { key: string; status: string; value: string | null; history: string[]; text: string; record?: string }
  dependants: { key: string; status: string; value: string | null; text: string; via: string; effect: string }[]
}
