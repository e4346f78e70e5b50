import type { ProjectId } from '../core/ids.js'
import { invalidInput, MnemoError } from '../core/errors.js'
import { squash } from '../core/text.js'
import type { HookAgent, Memory, ProjectRef, RecallHit } from '../core/types.js'
import { filesOfToolInput } from '../capture/tool-text.js'
import { userWords } from '../capture/agent-wrappers.js'
import { isoDay } from '../context/anchor-dates.js'
import { assemblePromptBlock, MAX_PROMPT_BUDGET, MIN_PROMPT_BUDGET, type PromptBlock, type PromptItem } from '../context/prompt-block.js'
import {
  coverage,
  DEFAULT_GATE,
  gateTerms,
  opensGate,
  weighTerms,
  type Coverage,
  type GateConfig,
  type GateTerm,
} from '../context/relevance-gate.js'
import { fileEntityName } from '../retrieval/entities.js'
import type { InjectionKey, InjectionWhat } from '../storage/store.js'
import type { BuiltinVectors } from './builtin-vectors.js'
import type { EngineContext } from './engine-context.js'
import type { RecallOptions } from './recall.js'
import { userProjectId, withUserProject } from './projects.js'

/** Recall as the per-prompt path runs it: keyword, graph and time channels only (no model refit on the hook path). */
type PromptRecallFn = (query: string, options: RecallOptions) => Promise<RecallHit[]>

/** Candidates recall returns for the gate to judge. */
const PROMPT_CANDIDATES = 12
/** Channels of per-prompt recall: the builtin vector channel may refit its model, which a hook cannot wait for. */
const PROMPT_CHANNELS = ['bm25', 'graph', 'time'] as const
/** Memory kinds a file hint carries (with error observations). */
const HINT_KINDS: ReadonlySet<string> = new Set(['decision', 'lesson', 'fact', 'preference', 'procedure'])
/** Most documents mentioning a file read for its hints. */
const HINT_CANDIDATES = 200

/** The agent session a per-prompt or file-hint injection is for. */
export interface SessionRef {
  project: ProjectRef
  agent: string
  /** The agent's own session id (`session_id` of the hook payload). */
  sessionKey: string
}

/** What one prompt's injection held and how the gate judged the candidates. */
export interface PromptRecallResult extends PromptBlock {
  /**
   * Each candidate recall returned, best first: its id, the share of the prompt's IDF mass it covers, whether it
   * holds a term rare enough to open the gate (`GateConfig.minTermIdf`), and whether it cleared the gate.
   */
  judged: { id: string; share: number; cleared: boolean; rare?: boolean; skipped?: 'already-shown' | 'this-session' | 'flagged' | 'echo' }[]
  /** The prompt's terms with their weights. */
  terms: GateTerm[]
  /** What the block shows, as the session's injection record keeps it (recorded already unless `record: false`). */
  shown: ShownRow[]
}

function injectionKey(ctx: EngineContext, s: Pick<SessionRef, 'agent' | 'sessionKey'>): InjectionKey {
  return { agent: s.agent, sessionKey: s.sessionKey, user: ctx.access.user ?? '' }
}

/**
 * One thing a session was shown, as its injection record keeps it: a recalled item (`item`, by id), a correction of
 * one (`correction`, the corrected item's id), or a file whose hints were looked up (`file`, its entity name).
 */
export interface ShownRow {
  itemId: string
  what: InjectionWhat
}

/**
 * Records what a session was shown (SessionStart's block included), so later prompts neither repeat nor forget to
 * correct it; under the engine's user (none: ''). Recording a row twice keeps the first.
 */
export async function noteInjected(
  ctx: EngineContext,
  s: Pick<SessionRef, 'agent' | 'sessionKey'>,
  rows: readonly ShownRow[],
  at = ctx.clock.now(),
): Promise<void> {
  await ctx.store.recordInjections(injectionKey(ctx, s), rows, at)
}

/** Whether a per-prompt block or file hint records what it shows for the session when it is computed (default), or leaves it to the caller (`shown`). */
export interface RecordOption {
  /**
   * False: nothing is recorded; the result's `shown` lists the rows for the caller to record (`noteInjected`) once the
   * block has reached the agent, so a block that never did (a client that stopped waiting) is not counted as shown.
   * An empty block's rows (files looked up that had no hints) are recorded either way: nothing is shown then.
   * Default true.
   */
  record?: boolean
}

async function projectOf(ctx: EngineContext, ref: ProjectRef): Promise<ProjectId | undefined> {
  return (await ctx.store.listProjects(ctx.access.who())).find((p) => p.root === ref.root)?.id
}

function quoteShort(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return JSON.stringify(flat.length <= 120 ? flat : `${flat.slice(0, 119)}…`.toWellFormed())
}

/**
 * One line per memory this session was shown that has since stopped being current (superseded, forgotten or
 * archived, by any process), each at most once per session: what replaced it, or that it no longer holds.
 */
async function corrections(
  ctx: EngineContext,
  shown: readonly { itemId: string; what: InjectionWhat }[],
): Promise<{ lines: string[]; corrected: string[]; replacements: string[] }> {
  const done = new Set(shown.filter((r) => r.what === 'correction').map((r) => r.itemId))
  const lines: string[] = []
  const corrected: string[] = []
  const replacements: string[] = []
  const day = (ms: number): string => isoDay(ms, ctx.timeZone)
  for (const { itemId, what } of shown) {
    if (what !== 'item' || !itemId.startsWith('mem_') || done.has(itemId)) continue
    const m = await ctx.store.getMemory(itemId)
    if (m !== undefined && !ctx.access.sees(m)) continue
    if (m === undefined) {
      lines.push(`- Correction: memory ${itemId}, shown earlier in this session, was forgotten; disregard it.`)
    } else if (m.supersededBy !== undefined || m.validTo !== undefined) {
      let next: Memory | undefined = m
      // Follow the chain to the current version (bounded: a chain is short, and a cycle must not hang a hook).
      for (let i = 0; i < 20 && next?.supersededBy !== undefined; i++) next = await ctx.store.getMemory(next.supersededBy)
      if (next && next.id !== m.id && next.validTo === undefined && ctx.access.sees(next)) {
        lines.push(
          `- Correction: ${quoteShort(ctx.readRedact(next.text))} (since ${day(next.validFrom)}); earlier this session said ${quoteShort(ctx.readRedact(m.text))} (${m.id}).`,
        )
        replacements.push(next.id)
      } else
        lines.push(
          `- Correction: ${quoteShort(ctx.readRedact(m.text))} (${m.id}), shown earlier in this session, no longer holds (since ${day(m.validTo ?? ctx.clock.now())}).`,
        )
    } else if (m.archivedAt !== undefined) {
      lines.push(
        `- Correction: ${quoteShort(ctx.readRedact(m.text))} (${m.id}), shown earlier in this session, was archived on ${day(m.archivedAt)}: it is no longer current.`,
      )
    } else continue
    corrected.push(itemId)
  }
  return { lines, corrected, replacements }
}

/** `MnemoEngine.promptContext`: `promptRecall` over the engine's recall, with the builtin vectors and without the neural embedder. */
export async function promptContext(
  ctx: EngineContext,
  builtin: () => Promise<BuiltinVectors>,
  session: SessionRef,
  prompt: string,
  budgetTokens: number,
  gate: GateConfig | undefined,
  options: RecordOption = {},
): Promise<PromptRecallResult> {
  checkPromptBudget(budgetTokens)
  const vectors = await builtin()
  const { recall } = await import('./recall.js')
  return promptRecall(
    ctx,
    // Ranking only: the gate reads each hit's full text, and nothing shows the warnings.
    async (q, o) => (await recall(ctx, { builtin: vectors, embedder: undefined }, q, o, 'ranking')).hits,
    session,
    prompt,
    budgetTokens,
    gate,
    options,
  )
}

/** @throws {MnemoError} `INVALID_INPUT` — a per-prompt budget that is not an integer of `MIN_PROMPT_BUDGET`–`MAX_PROMPT_BUDGET` tokens. */
export function checkPromptBudget(budget: number): void {
  if (!Number.isInteger(budget) || budget < MIN_PROMPT_BUDGET || budget > MAX_PROMPT_BUDGET) {
    throw invalidInput('budget', `per-prompt budget must be an integer ${MIN_PROMPT_BUDGET}–${MAX_PROMPT_BUDGET} tokens (got ${budget})`)
  }
}

/**
 * The block injected with one prompt of a session: corrections of what the session was shown earlier and has since
 * changed, then the recalled items that clear the relevance gate (see relevance-gate.ts), never one the session was
 * already shown, nor one of its own observations. What it shows is recorded for the session (unless `record: false`).
 *
 * Relevance: recall (keyword, graph, time channels) proposes `PROMPT_CANDIDATES` hits; each is judged by the share
 * of the prompt's IDF mass its full text covers (IDF over the project's documents), which, unlike fused RRF scores,
 * means the same across prompts and projects. Nothing clears the gate: no item is injected.
 *
 * @param budgetTokens - Most tokens of the block (see `assemblePromptBlock`).
 * @returns The block (empty text: inject nothing) and the gate's verdict on each candidate.
 */
async function promptRecall(
  ctx: EngineContext,
  recallFn: PromptRecallFn,
  s: SessionRef,
  prompt: string,
  budgetTokens: number,
  gate: GateConfig = DEFAULT_GATE,
  { record = true }: RecordOption = {},
): Promise<PromptRecallResult> {
  const projectId = await projectOf(ctx, s.project)
  const empty: PromptRecallResult = { text: '', tokens: 0, itemIds: [], corrections: 0, omitted: 0, judged: [], terms: [], shown: [] }
  if (projectId === undefined) return empty
  const key = injectionKey(ctx, s)
  const shown = await ctx.store.injections(key)
  const fix = await corrections(ctx, shown)
  const seen = new Set([...shown.filter((r) => r.what === 'item').map((r) => r.itemId), ...fix.replacements])
  const session = (await ctx.store.listSessions({ projectIds: [projectId], limit: 20, ...ctx.access.who() })).find(
    (x) => x.sessionKey === s.sessionKey && x.agent === s.agent,
  )

  const judged: PromptRecallResult['judged'] = []
  const items: PromptItem[] = []
  // The project and the user's own memories for every project (see `userProject`).
  const projectIds = await withUserProject(ctx, [projectId])
  const mine = await userProjectId(ctx)
  const scope = { projectIds, ...ctx.access.who() }
  let terms = gateTerms(prompt)
  let n = 0
  if (terms.length > 0) {
    n = await ctx.store.countDocs(scope)
    // Counting stops at a quarter of the documents: a term that common weighs little either way.
    const cap = Math.max(64, Math.ceil(n / 4))
    const dfs = new Map<string, number>()
    for (const t of terms) if (!dfs.has(t.expr)) dfs.set(t.expr, await ctx.store.matchCount({ ...scope, match: t.expr, limit: cap }))
    terms = weighTerms(terms, n, (expr) => dfs.get(expr)!)
    let hits: RecallHit[] = []
    try {
      hits = await recallFn(prompt, { projectIds, limit: PROMPT_CANDIDATES, channels: PROMPT_CHANNELS })
    } catch (error) {
      // A prompt with no searchable word recalls nothing; anything else is the caller's to log.
      if (!MnemoError.is(error, 'INVALID_INPUT')) throw error
    }
    const candidates: { hit: RecallHit; text: string; c: Coverage }[] = []
    const echo = squash(prompt).toLowerCase()
    // The best coverage of anything the session was already shown still says the prompt is about this project.
    let shownBest: Coverage | undefined
    for (const hit of hits) {
      if (seen.has(hit.id)) {
        const known = hit.type === 'memory' ? await ctx.store.getMemory(hit.id) : await ctx.store.getObservation(hit.id)
        const c =
          known === undefined
            ? undefined
            : coverage(terms, `${known.text} ${'role' in known && typeof known.role === 'string' ? known.role : ''}`)
        if (c !== undefined && (shownBest === undefined || c.share > shownBest.share)) shownBest = c
        judged.push({
          id: hit.id,
          share: c?.share ?? 0,
          cleared: false,
          rare: c !== undefined && opensGate(terms, { ...c, share: 1 }, gate, n),
          skipped: 'already-shown',
        })
        continue
      }
      if (session !== undefined && hit.sessionId === session.id) {
        judged.push({ id: hit.id, share: 0, cleared: false, skipped: 'this-session' })
        continue
      }
      if ((hit.flags?.length ?? 0) > 0) {
        judged.push({ id: hit.id, share: 0, cleared: false, skipped: 'flagged' })
        continue
      }
      const full = hit.type === 'memory' ? await ctx.store.getMemory(hit.id) : await ctx.store.getObservation(hit.id)
      if (full === undefined) continue
      // The same words asked before (in another session) tell the agent nothing it does not have.
      if (full.kind === 'prompt' && squash(full.text).toLowerCase() === echo) {
        judged.push({ id: hit.id, share: 0, cleared: false, skipped: 'echo' })
        continue
      }
      const c = coverage(terms, `${full.text} ${'role' in full && typeof full.role === 'string' ? full.role : ''}`)
      candidates.push({ hit, text: full.text, c })
    }
    // The prompt-level decision: the best-covered candidate must open the gate; then each candidate is judged alone.
    const best = candidates.reduce<Coverage | undefined>((b, x) => (b === undefined || x.c.share > b.share ? x.c : b), shownBest)
    const open = best !== undefined && opensGate(terms, best, gate, n)
    for (const { hit, text, c } of candidates) {
      const cleared = open && c.share >= gate.minItemShare
      judged.push({ id: hit.id, share: c.share, cleared, rare: opensGate(terms, { ...c, share: 1 }, gate, n) })
      if (cleared)
        items.push({
          id: hit.id,
          label: `${hit.kind}${hit.projectId === mine ? ' · yours, every project' : ''} · ${isoDay(hit.ts, ctx.timeZone)}`,
          text,
        })
    }
  }
  // Redacted as it is offered to the block: the items left out once it is full are never read.
  const block = assemblePromptBlock({ items, corrections: fix.lines, budgetTokens, prepare: (t) => ctx.readRedact(t) })
  const rows: ShownRow[] = [
    ...block.itemIds.map((itemId) => ({ itemId, what: 'item' as const })),
    // A correction shown is recorded once; its replacement counts as shown (it was quoted).
    ...(block.corrections > 0 ? fix.corrected.map((itemId) => ({ itemId, what: 'correction' as const })) : []),
    ...(block.corrections > 0 ? fix.replacements.map((itemId) => ({ itemId, what: 'item' as const })) : []),
  ]
  if (record) await noteInjected(ctx, s, rows)
  return { ...block, judged, terms, shown: rows }
}

/**
 * Hints about files a tool is about to touch (or just touched): past errors that mention the file, and decisions,
 * lessons and facts about it (its graph entity), newest first, at most once per file per session, under the same
 * budget and escaping as the per-prompt block. Never an item the session was already shown. What it shows, and the
 * files it looked up, are recorded for the session (unless `record: false`, see `RecordOption`).
 *
 * @param files - Paths as the tool named them (absolute, or relative to the project root).
 * @returns The block (empty text: inject nothing), the files looked up, and the rows of `shown`.
 */
export async function fileHints(
  ctx: EngineContext,
  s: SessionRef,
  files: readonly string[],
  budgetTokens: number,
  { record = true }: RecordOption = {},
): Promise<PromptBlock & { files: string[]; shown: ShownRow[] }> {
  const projectId = await projectOf(ctx, s.project)
  const empty = { text: '', tokens: 0, itemIds: [], corrections: 0, omitted: 0, files: [], shown: [] }
  if (projectId === undefined || files.length === 0) return empty
  const key = injectionKey(ctx, s)
  const shown = await ctx.store.injections(key)
  const hinted = new Set(shown.filter((r) => r.what === 'file').map((r) => r.itemId))
  const seen = new Set(shown.filter((r) => r.what === 'item').map((r) => r.itemId))
  const names = [...new Set(files.map((f) => fileEntityName(f, s.project.root)))].filter((n) => n.length >= 2 && !hinted.has(n))
  if (names.length === 0) return empty
  const scope = { projectIds: [projectId], ...ctx.access.who() }
  const entities = await ctx.store.findEntities(
    scope,
    names.map((name) => ({ type: 'file' as const, name })),
  )
  const session = (await ctx.store.listSessions({ projectIds: [projectId], limit: 20, ...ctx.access.who() })).find(
    (x) => x.sessionKey === s.sessionKey && x.agent === s.agent,
  )
  const items: PromptItem[] = []
  if (entities.length > 0) {
    const mentions = await ctx.store.entityMentions(
      entities.map((e) => e.id),
      scope,
      HINT_CANDIDATES,
    )
    const docs = (await ctx.store.docs([...new Set(mentions.map((m) => m.docKey))]))
      .filter((d) => d.flags.length === 0 && !seen.has(d.id) && (session === undefined || d.sessionId !== session.id))
      .filter((d) =>
        d.type === 'memory' ? HINT_KINDS.has(d.kind) && d.validTo === undefined && d.archivedAt === undefined : d.kind === 'error',
      )
      .sort((a, b) => b.ts - a.ts)
    const byEntity = new Map(entities.map((e) => [e.id, e.name]))
    const fileOf = new Map(mentions.map((m) => [m.docKey, byEntity.get(m.entityId) ?? '']))
    for (const d of docs)
      items.push({ id: d.id, label: `${d.kind} · ${fileOf.get(d.docKey)} · ${isoDay(d.ts, ctx.timeZone)}`, text: d.text })
  }
  const block = assemblePromptBlock({ items, corrections: [], budgetTokens, prepare: (t) => ctx.readRedact(t) })
  // Every file looked up is done for the session, with hints or without: the next touch asks nothing again.
  const rows: ShownRow[] = [
    ...names.map((itemId) => ({ itemId, what: 'file' as const })),
    ...block.itemIds.map((itemId) => ({ itemId, what: 'item' as const })),
  ]
  // Files without hints show nothing: recorded now whoever records the rest.
  if (record || block.text === '') await noteInjected(ctx, s, rows)
  return { ...block, files: names, shown: rows }
}

/** The hook output event name each agent reads injected context from, by mnemo event; absent: the agent takes none there. */
type PromptEvent = 'UserPromptSubmit' | 'PreToolUse' | 'PostToolUse'
const CONTEXT_CHANNELS: Readonly<Record<HookAgent, Partial<Record<PromptEvent, string>>>> = {
  // hookSpecificOutput.additionalContext of UserPromptSubmit and PreToolUse (Claude Code 2.1: both schemas carry it).
  'claude-code': { UserPromptSubmit: 'UserPromptSubmit', PreToolUse: 'PreToolUse' },
  // codex-rs/hooks output_parser.rs: UserPromptSubmit and PostToolUse read hookSpecificOutput.additionalContext (mnemo registers no PreToolUse there).
  codex: { UserPromptSubmit: 'UserPromptSubmit', PostToolUse: 'PostToolUse' },
  // gemini-cli hooks/types.ts: BeforeAgent (mnemo's UserPromptSubmit) and AfterTool (PostToolUse) take additionalContext.
  gemini: { UserPromptSubmit: 'BeforeAgent', PostToolUse: 'AfterTool' },
  // Cursor's beforeSubmitPrompt answers only whether to continue: no context channel.
  cursor: {},
  // OpenCode's plugin (connect/opencode-plugin.ts) adds UserPromptSubmit's block to the user's message (a synthetic text
  // part left in chat.message's output.parts) and PostToolUse's after the tool's output (tool.execute.after's output.output).
  opencode: { UserPromptSubmit: 'UserPromptSubmit', PostToolUse: 'PostToolUse' },
}

/**
 * The hook output event name through which `agent` takes injected context at mnemo event `event` (`CONTEXT_CHANNELS`):
 * UserPromptSubmit, PreToolUse or PostToolUse for the agents that read one there; undefined when the agent takes none
 * at that event (Cursor everywhere, Claude Code after a tool, Codex, Gemini CLI and OpenCode before one, any other event).
 */
export function injectionChannel(agent: HookAgent, event: string): string | undefined {
  // Own keys only: `constructor` is no event.
  return Object.hasOwn(CONTEXT_CHANNELS[agent], event) ? CONTEXT_CHANNELS[agent][event as PromptEvent] : undefined
}

/** What a hook event asks to be injected, read from its payload: the channel, the agent session, and the prompt or the files. */
type InjectionRequest = { channel: string; sessionKey: string } & ({ prompt: string } | { files: string[] })

/**
 * What one hook event can ask to be injected (see `hookInjection`), read from its parsed payload without the store:
 * undefined when `agent` has no channel at `event` (`injectionChannel`), the payload names no session (`session_id`),
 * a UserPromptSubmit has no words of the user's, or a tool event names no file. A caller that gets undefined has nothing
 * to ask for (the team hook then skips its round trip to the server).
 *
 * @param payload - The hook payload, parsed (anything; a non-object asks for nothing).
 */
export function injectionRequest(agent: HookAgent, event: string, payload: unknown): InjectionRequest | undefined {
  const channel = injectionChannel(agent, event)
  if (channel === undefined || payload === null || typeof payload !== 'object' || Array.isArray(payload)) return undefined
  const fields = payload as Record<string, unknown>
  const sessionKey = fields['session_id']
  if (typeof sessionKey !== 'string' || sessionKey.length === 0) return undefined
  if (event === 'UserPromptSubmit') {
    // The user's words only: Gemini CLI passes the SessionStart block back inside the prompt (<hook_context>).
    const prompt = typeof fields['prompt'] === 'string' ? userWords(fields['prompt']) : ''
    return prompt.trim().length === 0 ? undefined : { channel, sessionKey, prompt }
  }
  const cwd = typeof fields['cwd'] === 'string' ? fields['cwd'] : undefined
  const files = filesOfToolInput(fields['tool_input'] ?? fields['tool_args'], cwd)
  return files.length === 0 ? undefined : { channel, sessionKey, files }
}

/** What a hook prints for the agent: its own event name and the block, for `hookSpecificOutput`; and what it shows. */
export interface HookInjection {
  hookEventName: string
  text: string
  /** The agent's session id the block is for (`session_id` of the payload). */
  sessionKey: string
  /** The rows of the session's injection record for this block: recorded already, unless asked for with `record: false`. */
  shown: ShownRow[]
}

/**
 * The context a hook of `agent` injects for mnemo event `event` (per-prompt recall on UserPromptSubmit, file hints
 * before or after a tool call), through that agent's channel for it; undefined when the agent has none there, the
 * payload names no session, or there is nothing to inject (see `injectionRequest`).
 *
 * @param stdin - The hook payload as received (JSON).
 * @param options.record - False: what the block shows is not recorded for the session, but returned as `shown` for
 *   the caller to record once the agent has it (see `RecordOption`). Default true.
 */
export async function hookInjection(
  engine: {
    promptContext: (
      s: SessionRef,
      prompt: string,
      budget: number,
      gate?: GateConfig,
      options?: RecordOption,
    ) => Promise<PromptBlock & { shown: ShownRow[] }>
    fileHints: (
      s: SessionRef,
      files: readonly string[],
      budget: number,
      options?: RecordOption,
    ) => Promise<PromptBlock & { shown: ShownRow[] }>
  },
  event: string,
  agent: HookAgent,
  stdin: string,
  project: ProjectRef,
  budgetTokens: number,
  options: RecordOption = {},
): Promise<HookInjection | undefined> {
  if (injectionChannel(agent, event) === undefined) return undefined
  let payload: unknown
  try {
    payload = JSON.parse(stdin)
  } catch {
    return undefined
  }
  const request = injectionRequest(agent, event, payload)
  if (request === undefined) return undefined
  const session: SessionRef = { project, agent, sessionKey: request.sessionKey }
  const block =
    'prompt' in request
      ? await engine.promptContext(session, request.prompt, budgetTokens, undefined, options)
      : await engine.fileHints(session, request.files, budgetTokens, options)
  return block.text === ''
    ? undefined
    : { hookEventName: request.channel, text: block.text, sessionKey: request.sessionKey, shown: block.shown }
}
