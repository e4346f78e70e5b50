import type { MemoryId, ObservationId, ProjectId, SessionId } from './ids.js'

/** Agents mnemo knows the formats of; `mnemo` marks events mnemo made itself (remember, pin, …). */
export const AGENT_NAMES = ['claude-code', 'codex', 'gemini', 'cursor', 'opencode', 'locomo', 'mnemo'] as const
export type AgentName = (typeof AGENT_NAMES)[number]

/** Agents that call mnemo's surfaces (hooks, MCP) themselves: what `--agent` accepts. */
export const SURFACE_AGENTS = ['claude-code', 'codex', 'gemini', 'cursor', 'opencode'] as const satisfies readonly AgentName[]

/** Agents whose lifecycle hooks (OpenCode: mnemo's plugin) call `mnemo hook <event> --agent <name>`. */
export const HOOK_AGENTS = ['claude-code', 'codex', 'gemini', 'cursor', 'opencode'] as const
export type HookAgent = (typeof HOOK_AGENTS)[number]

/** A spooled or command-line agent name, or Claude Code for anything unknown. */
export function toHookAgent(name: string | undefined): HookAgent {
  return (HOOK_AGENTS as readonly string[]).includes(name ?? '') ? (name as HookAgent) : 'claude-code'
}

/**
 * Source formats of the event log. Each names one payload shape and one
 * derivation function (capture/derive.ts), so `rebuild` can re-derive
 * observations from the stored payloads alone.
 */
export type EventFormat =
  | 'claude-hook' // a Claude Code hook payload (stdin of `mnemo hook <event>`)
  | 'claude-transcript' // one record of a Claude Code session JSONL file
  | 'codex-rollout' // one record of a Codex CLI rollout JSONL file
  | 'gemini-session' // one message of a Gemini CLI session JSON file
  | 'opencode-storage' // one session, message or part file of OpenCode's JSON storage
  | 'cursor-state' // one conversation or chat bubble of a Cursor state.vscdb database
  | 'locomo-turn' // one dialogue turn of a LoCoMo conversation
  | 'mnemo' // an operation mnemo recorded itself (remember, forget)
  | 'folded' // an old capture event compacted to what it derived (`mnemo compact`): { v, from, derivation }

/** Where a session lives: a project is a git top-level folder, a folder, or a named corpus. */
export interface ProjectRef {
  /** Normalised absolute root path, or `<scheme>:<name>` for non-filesystem corpora (`locomo:conv-26`). */
  root: string
  /** Short display name (the root's last path segment, or the corpus name). */
  name: string
}

/**
 * One event to append to the log: already sanitised (caps, binaries, Unicode).
 * `idemKey` makes appends idempotent: a second event with the same key is a no-op.
 */
export interface EventInput {
  agent: AgentName
  format: EventFormat
  /** Event type in the source's own vocabulary (`PostToolUse`, `response_item`, `turn`, `remember`). */
  type: string
  /** The agent's own session id (`session_id`, `sessionId`, rollout id); unique per agent. */
  sessionKey: string
  project: ProjectRef
  /** When the event happened, epoch ms. */
  ts: number
  idemKey: string
  /** The source payload after sanitising; stored verbatim in the log. */
  payload: unknown
  /** Optional session start time and title hints (LoCoMo session dates, Codex session_meta). */
  sessionStartedAt?: number
  /**
   * The user it was captured for (`MNEMO_USER`, or the user of a team server's
   * token); absent = no user: the row is shared with every user of the store.
   * See `Scope` in storage/store.ts.
   */
  user?: string
}

/** The latest event time mnemo accepts, epoch ms: the end of year 9999 (the earliest is 1970). */
export const MAX_EVENT_TS = 253_402_300_799_999

/** Observation kinds: what one event tells us. */
export type ObservationKind =
  | 'prompt' // what the user asked
  | 'message' // what an assistant or a conversation participant said
  | 'reasoning' // a reasoning summary an agent exposed
  | 'tool' // a tool call, with its result when the source gives both
  | 'tool_result' // a tool's result recorded apart from its call
  | 'error' // a failed tool call or error result
  | 'summary' // a summary written by the agent (compaction, transcript summary)

export const OBSERVATION_KINDS: readonly ObservationKind[] = ['prompt', 'message', 'reasoning', 'tool', 'tool_result', 'error', 'summary']

/** What derivation produces from one event, before ids and scope are attached. */
export interface DerivedObservation {
  kind: ObservationKind
  /** Who produced it: `user`, `assistant`, a subagent type, or a speaker's name. */
  role: string
  text: string
  tool?: string
  /** File paths the observation touches (tool inputs), as written by the agent. */
  files?: string[]
  /** The source's own reference for this item (`tool_use_id`, `dia_id`, record uuid). */
  sourceRef?: string
  /** Event time override (defaults to the event's ts). */
  ts?: number
  /** Why this text is suspect (`injection:ignore-instructions`, …); flagged text stays out of injected context. */
  flags?: string[]
}

/**
 * Which part of a tool call an observation holds: its input (`call`), its output or error
 * (`result`), or both (`whole`, as a hook's PostToolUse gives them). Two capture paths of one
 * session split a call differently; see `Derivation.origin`.
 */
export type StepPart = 'call' | 'result' | 'whole'

/** What an event does to its session besides observations. */
export interface SessionEffect {
  ended?: boolean
  /**
   * The name its agent gave the session (Cursor, OpenCode), `oneLine(name, SESSION_TITLE_CHARS)`. Without one, the
   * store titles a session with its first prompt observation, in the same form: the one rule for prompts.
   */
  title?: string
}

export interface Observation {
  id: ObservationId
  sessionId: SessionId
  projectId: ProjectId
  kind: ObservationKind
  role: string
  text: string
  tool: string | undefined
  files: string[]
  sourceRef: string | undefined
  /** Epoch ms. */
  ts: number
  eventSeq: number
  /** Reasons the text is suspect (see DerivedObservation.flags); empty when none. */
  flags: string[]
  /** The user it was captured for; absent when shared (no user). */
  user?: string
}

/**
 * Kinds of memory. What a person or agent can `remember` (semantic tier):
 * decision, fact, preference, lesson. What consolidation derives: summary
 * (episodic tier: one per session) and procedure (procedural tier: how a
 * recurring kind of work was done, distilled from several successful
 * sessions; see lifecycle/procedures.ts).
 */
export type MemoryKind = 'decision' | 'fact' | 'preference' | 'lesson' | 'summary' | 'procedure'
/** Kinds accepted by `remember`. */
export const MEMORY_KINDS: readonly MemoryKind[] = ['decision', 'fact', 'preference', 'lesson']
/** Every memory kind, the derived ones (summary, procedure) included. */
export const ALL_MEMORY_KINDS: readonly MemoryKind[] = [...MEMORY_KINDS, 'summary', 'procedure']

/** Memory tiers above the working tier (raw observations). */
export type MemoryTier = 'episodic' | 'semantic' | 'procedural'

/** The tier of a memory kind: episodic (session summaries), procedural (procedures) or semantic (facts, decisions, preferences, lessons). */
export function tierOf(kind: MemoryKind): MemoryTier {
  return kind === 'summary' ? 'episodic' : kind === 'procedure' ? 'procedural' : 'semantic'
}

export interface Memory {
  id: MemoryId
  projectId: ProjectId
  kind: MemoryKind
  text: string
  /** Epoch ms. */
  createdAt: number
  /** How many times the same text was remembered again in the same project. */
  seenCount: number
  /** Reasons the text is suspect; empty when none. */
  flags: string[]
  /** Epoch ms it became current, and when a newer version replaced it (undefined while current). */
  validFrom: number
  validTo: number | undefined
  /** The memory it replaced, and the one that replaced it. */
  supersedes: string | undefined
  supersededBy: string | undefined
  /** Why it needs a look (`depends-on-superseded:<id>`), if it does. */
  review: string | undefined
  pinned: boolean
  /** Epoch ms it was archived (out of default recall), if it is. */
  archivedAt: number | undefined
  /** Epoch ms it was last remembered again. */
  lastSeenAt: number
  /** Provenance: ids of the observations it was derived from (empty for explicit memories). */
  sources: string[]
  /**
   * 0–1: how sure the extraction that derived it was (consolidation's cue
   * phrases and lessons, or the model's own score); undefined for a memory
   * someone stated (`remember`) and for summaries and procedures, which are
   * checked against their sources instead of scored.
   */
  confidence: number | undefined
  /** The user it belongs to; absent when shared (no user). */
  user?: string
  /** The agent whose work it came from; absent when stated by a person or drawn from several agents. */
  agent?: AgentName
}

export interface Project {
  id: ProjectId
  name: string
  root: string
}

export interface Session {
  id: SessionId
  projectId: ProjectId
  agent: AgentName
  /** The agent's own session id. */
  sessionKey: string
  /** Epoch ms of the first and last event. */
  startedAt: number
  lastEventAt: number
  /** Epoch ms of SessionEnd, if seen. */
  endedAt: number | undefined
  /** The first prompt, shortened; a human handle for the session. */
  title: string | undefined
  observationCount: number
  /** The user it was captured for; absent when shared (no user). */
  user?: string
}

/** One recall result. `score` is the fused relevance (higher is better, > 0). */
export interface RecallHit {
  id: ObservationId | MemoryId
  type: 'observation' | 'memory'
  kind: ObservationKind | MemoryKind
  projectId: ProjectId
  project: string
  sessionId: SessionId | undefined
  /** Epoch ms. */
  ts: number
  score: number
  /** Short snippet of the text around the matched terms. */
  snippet: string
  /** Source reference (`dia_id`, `tool_use_id`) when the hit is an observation. */
  sourceRef: string | undefined
  /** Which channels found it, with its 1-based rank and raw score in each (`--explain`). */
  channels?: Partial<Record<ChannelName, { rank: number; score: number }>>
  /** True when it entered only as the neighbour of a matching turn in its session. */
  viaNeighbor?: boolean
  /** Its 1-based rank in the fused list before the re-ranker reordered the head (`--explain`); absent when the re-ranker is off. */
  fusedRank?: number
  /** Reasons the text is suspect (`injection:…`); shown, never hidden from recall. */
  flags?: string[]
}

/**
 * Retrieval channels mnemo fuses: `bm25` keyword search, `vector` the builtin
 * LSA embedder, `embedding` a configured neural embedder (on top of the
 * builtin one, never instead), `graph` the entity graph, `time` dates named
 * in the query.
 */
export const CHANNEL_NAMES = ['bm25', 'vector', 'embedding', 'graph', 'time'] as const
/** One of `CHANNEL_NAMES`. */
export type ChannelName = (typeof CHANNEL_NAMES)[number]

/**
 * The two full-text columns mnemo indexes for every observation and memory.
 * FTS5's `porter unicode61` tokenizer then lowercases, strips diacritics and
 * stems them.
 */
export interface IndexedText {
  /** The text, with every CJK run rewritten as overlapping bigrams. */
  body: string
  /** Extra terms: the parts of camelCase/PascalCase identifiers and file names. */
  parts: string
  /** Who and when: role or speaker, kind, and the date in words (`user prompt 8 May 2023 Monday`). */
  meta: string
}

/** Kinds of entity mnemo extracts deterministically (no model). */
export type EntityType = 'file' | 'symbol' | 'url' | 'tool' | 'name'

/**
 * An entity as stored: its type and normalised name. Files keep their case
 * (`fileEntityName`), URLs keep the case of their path (scheme and host are
 * lowercased); symbols, tools and names are lowercase. Trimmed.
 */
export interface EntityRef {
  type: EntityType
  name: string
}

/** The block injected into a new session, with what went into it. */
export interface ContextBlock {
  /** The delimited block, ready to inject; empty when there is nothing to show (inject nothing). */
  text: string
  /** Estimated tokens of `text` (see `estimateTokens`); never above the budget. */
  tokens: number
  budgetTokens: number
  /** Ids of the memories and sessions included, in order. */
  memoryIds: string[]
  sessionIds: string[]
  /** Items left out because the budget ran out (the block's last line before the closing tag says how many). */
  omitted: number
}

/** Smallest budget honoured: the header and closing tag take about 90 tokens. */
export const MIN_CONTEXT_BUDGET = 200
