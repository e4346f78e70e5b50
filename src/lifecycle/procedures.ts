import { MnemoError } from '../core/errors.js'
import { fnv1a64 } from '../core/hash.js'
import { truncateGraphemes } from '../core/text.js'
import { STOP_WORDS } from '../retrieval/fts-query.js'
import { filePattern, normalizeCommand, type SessionSteps, type Step, type StepAction } from './procedure-steps.js'
import { parseProcedureText, procedureText, type ProcedureParts, type ProcedureStep } from './procedure-text.js'

/**
 * Semantic → procedural: when the same kind of work succeeded in several
 * sessions, a named procedure (trigger, steps, files, check), stored only
 * after checking every step against the sessions it came from.
 *
 * 1. Each finished session is read as steps (procedure-steps.ts) and judged
 *    successful or not.
 * 2. **Same kind of work**: successful sessions with the same work key —
 *    the same final check command and the same set of edited file patterns
 *    (`npm test` + {`src/middleware/*.ts`, `src/*.ts`}). Sessions that
 *    edited nothing are not procedure material.
 * 3. A group of at least `minSessions` (default 2) sessions gives a
 *    candidate: the steps common to its newest `maxSessions` (default 5)
 *    sessions, in order (pairwise longest common subsequence folded over the
 *    sessions, oldest first), ending with the check.
 * 4. **Verification**: every step must be attested, in order, by a
 *    successful call in each of those sessions (greedy earliest match); a
 *    step that is not is dropped, and a candidate left with fewer than two
 *    steps or no Edit step is not stored. The sources are the attesting
 *    observations of each session.
 * 5. A model, when configured, may name the procedure and phrase its
 *    trigger and steps; its steps go through the same verification, and any
 *    failure (provider error, nothing attested) falls back to step 3's
 *    deterministic text.
 */

/** Tunables of procedure distillation, with defaults in {@link DEFAULT_PROCEDURE_CONFIG}. */
export interface ProcedureConfig {
  /** Successful sessions of the same kind of work needed before a procedure is stored (≥ 2). */
  minSessions: number
  /** Newest successful sessions of a kind a procedure is distilled from and checked against. */
  maxSessions: number
  /** Most steps in a procedure (Read steps go first when there are more). */
  maxSteps: number
  /** Newest finished sessions of a project looked at. */
  windowSessions: number
}

const DEFAULT_PROCEDURE_CONFIG: ProcedureConfig = { minSessions: 2, maxSessions: 5, maxSteps: 12, windowSessions: 200 }

/** A config with defaults filled in and bounds applied (minSessions ≥ 2, maxSessions ≥ minSessions). */
export function resolveProcedureConfig(config: Partial<ProcedureConfig> = {}): ProcedureConfig {
  const c = { ...DEFAULT_PROCEDURE_CONFIG, ...config }
  const minSessions = Math.max(2, Math.floor(c.minSessions))
  return {
    minSessions,
    maxSessions: Math.max(minSessions, Math.floor(c.maxSessions)),
    maxSteps: Math.max(2, Math.floor(c.maxSteps)),
    windowSessions: Math.max(minSessions, Math.floor(c.windowSessions)),
  }
}

/** The work key of a successful session: check + sorted edited patterns; undefined when it edited nothing. */
export function workKey(s: SessionSteps): string | undefined {
  if (!s.successful || s.check === undefined) return undefined
  const edits = editedPatterns([s])
  return edits.length === 0 ? undefined : `${s.check}\u0000${edits.join('\u0000')}`
}

function editedPatterns(sessions: readonly SessionSteps[]): string[] {
  return [...new Set(sessions.flatMap((s) => s.steps.filter((x) => x.action === 'Edit').map((x) => x.target)))].sort()
}

/** The key a procedure is stored under (its write-guard subject: a new version of the same kind of work supersedes the old one). */
function procedureKey(check: string, files: readonly string[]): string {
  return fnv1a64(`procedure\u0000${check}\u0000${[...files].sort().join('\u0000')}`)
}

/** A longest common subsequence of two label sequences (ties broken toward the earlier steps of `a`). */
export function lcs(a: readonly string[], b: readonly string[]): string[] {
  const n = a.length
  const m = b.length
  const table = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1))
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--)
      table[i]![j] = a[i] === b[j] ? table[i + 1]![j + 1]! + 1 : Math.max(table[i + 1]![j]!, table[i]![j + 1]!)
  }
  const out: string[] = []
  for (let i = 0, j = 0; i < n && j < m; ) {
    if (a[i] === b[j]) {
      out.push(a[i]!)
      i++
      j++
    } else if (table[i]![j + 1]! >= table[i + 1]![j]!) j++
    else i++
  }
  return out
}

/** Steps per session kept for the common-subsequence search: the last ones, nearest the check. */
const MAX_SEQUENCE = 200

/**
 * The steps common to every session, in order: pairwise LCS folded over the
 * sessions (oldest first), a step repeated back to back kept once (two
 * separate edits of the same pattern read as one step).
 */
function commonSteps(sessions: readonly SessionSteps[]): string[] {
  const sequences = sessions.map((s) => s.steps.slice(-MAX_SEQUENCE).map((x) => x.label))
  return sequences
    .slice(1)
    .reduce((acc, seq) => lcs(acc, seq), sequences[0] ?? [])
    .filter((label, i, all) => i === 0 || all[i - 1] !== label)
}

/** The outcome of checking candidate steps against their source sessions. */
interface Verification {
  /** Steps attested in order in every session, in the candidate's order. */
  steps: ProcedureStep[]
  /** Steps that were not (unparseable, or missing or out of order in some session). */
  dropped: string[]
  /** The attesting observations, session by session, in step order. */
  sources: string[]
  /** True when what is left is worth storing: at least two steps, one of them an Edit. */
  usable: boolean
}

/**
 * Checks candidate steps against the sessions they are meant to come from.
 * Each step must be attested in every session by a successful call, after
 * the call that attested the previous kept step (greedy earliest match,
 * which finds an in-order match whenever one exists). A step that is not
 * attested everywhere is dropped and the next one is tried.
 */
export function verifySteps(candidate: readonly ProcedureStep[], sessions: readonly SessionSteps[]): Verification {
  const cursors = sessions.map(() => 0)
  const attesting: string[][] = sessions.map(() => [])
  const steps: ProcedureStep[] = []
  const dropped: string[] = []
  for (const step of candidate) {
    const label = parseStepLabel(step.label)
    const found = label === undefined ? [] : sessions.map((s, k) => s.steps.findIndex((x, i) => i >= cursors[k]! && x.label === label))
    if (label === undefined || found.some((i) => i < 0)) {
      dropped.push(step.label)
      continue
    }
    found.forEach((i, k) => {
      cursors[k] = i + 1
      attesting[k]!.push(sessions[k]!.steps[i]!.observationId)
    })
    steps.push(step.detail ? { label, detail: step.detail } : { label })
  }
  const sources = [...new Set(attesting.flat())]
  return { steps, dropped, sources, usable: steps.length >= 2 && steps.some((s) => s.label.startsWith('Edit ')) }
}

/**
 * A step as written by a person or a model, in the form steps are compared
 * in: `Run \`npm test -- orders\`` → `Run npm test`, `Edit src/app/a.ts` →
 * `Edit src/app/*.ts`. Undefined when it is not a Read, Edit or Run step.
 */
export function parseStepLabel(text: string): string | undefined {
  const m = /^\s*(read|edit|run)\s+(.+?)\s*$/i.exec(text.replace(/[`"]/g, ''))
  if (!m) return undefined
  const action = (m[1]![0]!.toUpperCase() + m[1]!.slice(1).toLowerCase()) as StepAction
  if (action === 'Run') {
    const [command] = normalizeCommand(m[2]!)
    return command === undefined ? undefined : `Run ${command}`
  }
  const target = m[2]!.includes('*') ? m[2]! : filePattern(m[2]!)
  return `${action} ${target}`
}

/** Keeps at most `max` steps: Read steps leave first, then the earliest; the last step (the check) stays. */
function capSteps(labels: readonly string[], max: number): string[] {
  const out = [...labels]
  while (out.length > max) {
    const read = out.findIndex((l, i) => i < out.length - 1 && l.startsWith('Read '))
    out.splice(Math.max(read, 0), 1)
  }
  return out
}

const FILLER = new Set([
  'please',
  'can',
  'could',
  'would',
  'you',
  'also',
  'now',
  'then',
  'need',
  'needs',
  'want',
  'let',
  'lets',
  'make',
  'sure',
  'just',
  'this',
  'that',
  'the',
  'thanks',
  'again',
  'okay',
])

function contentWords(text: string): string[] {
  return (text.toLowerCase().match(/\p{L}[\p{L}\p{N}_-]*/gu) ?? []).filter((w) => w.length >= 3 && !STOP_WORDS.has(w) && !FILLER.has(w))
}

/**
 * A deterministic name: the content words every session's prompts share,
 * in the order of the oldest session's prompt (at most 5), else `edit`
 * and the first edited pattern.
 */
function procedureName(sessions: readonly SessionSteps[], files: readonly string[]): string {
  const [first, ...others] = sessions
  const shared = [...new Set(contentWords(first?.prompts.join(' ') ?? ''))].filter((w) =>
    others.every((s) => contentWords(s.prompts.join(' ')).includes(w)),
  )
  return shared.length > 0 ? shared.slice(0, 5).join(' ') : `edit ${files[0] ?? 'files'}`
}

/** A deterministic trigger: the sessions' first prompts, quoted (up to 3, 80 characters each). */
function procedureTrigger(sessions: readonly SessionSteps[], files: readonly string[]): string {
  const asked = [...new Set(sessions.map((s) => s.prompts[0]).filter((p): p is string => p !== undefined && p.length > 0))].slice(0, 3)
  return asked.length > 0
    ? `tasks like ${asked.map((p) => JSON.stringify(truncateGraphemes(p, 80))).join(' or ')}`
    : `changes to ${files.join(', ')}`
}

/** A procedure ready to store, deterministic and verified. */
interface ProcedureCandidate {
  /** {@link procedureKey} of its check and files. */
  key: string
  /** The sessions it was distilled from and checked against, oldest first. */
  sessions: SessionSteps[]
  parts: ProcedureParts
  /** Attesting observations of each session. */
  sources: string[]
}

/** Deterministic, verified procedure candidates from a project's finished sessions (any order), one per kind of work that qualifies. */
export function distillProcedures(sessions: readonly SessionSteps[], config: Partial<ProcedureConfig> = {}): ProcedureCandidate[] {
  const c = resolveProcedureConfig(config)
  const groups = new Map<string, SessionSteps[]>()
  for (const s of [...sessions].sort((a, b) => a.startedAt - b.startedAt || a.sessionId.localeCompare(b.sessionId))) {
    const key = workKey(s)
    if (key === undefined) continue
    const group = groups.get(key)
    if (group) group.push(s)
    else groups.set(key, [s])
  }
  const out: ProcedureCandidate[] = []
  for (const group of groups.values()) {
    if (group.length < c.minSessions) continue
    const recent = group.slice(-c.maxSessions)
    const files = editedPatterns(recent)
    const check = recent[0]!.check!
    const verified = verifySteps(
      capSteps(commonSteps(recent), c.maxSteps).map((label) => ({ label })),
      recent,
    )
    if (!verified.usable) continue
    out.push({
      key: procedureKey(check, files),
      sessions: recent,
      parts: {
        name: procedureName(recent, files),
        trigger: procedureTrigger(recent, files),
        steps: verified.steps,
        files,
        check,
        sessions: recent.length,
      },
      sources: verified.sources,
    })
  }
  return out
}

// ---------------------------------------------------------------------------
// Planning a consolidation run
// ---------------------------------------------------------------------------

/** What a model is given to phrase a procedure (all of it already in the store: prompts and generalised steps). */
export interface ProcedureDraftInput {
  projectRoot: string
  /** The first prompt of each source session. */
  tasks: string[]
  /** The verified deterministic steps, in order (`Edit src/*.ts`). */
  steps: string[]
  files: string[]
  check: string
}

/** A model's phrasing of a procedure; its steps are checked before anything is stored. */
export interface ProcedureDraft {
  name: string
  trigger: string
  steps: { action: string; detail: string }[]
}

/** The model path of procedure distillation (an {@link LlmConsolidator} has it). */
export interface ProcedurePhraser {
  /** @throws {MnemoError} `PROVIDER_FAILED` — any model failure (network, HTTP, invalid answers, budget). */
  phraseProcedure(input: ProcedureDraftInput): Promise<{ draft: ProcedureDraft }>
}

/** A current procedure memory of the project (archived ones included). */
interface StoredProcedure {
  id: string
  text: string
  sources: string[]
  /** Archived by a person (or by decay): consolidation leaves it so instead of writing it again. */
  archivedAt?: number | undefined
}

/** A procedure to write: its text, provenance and write-guard subject key. */
interface ProcedureWrite {
  key: string
  text: string
  sources: string[]
  /** `llm`: phrased by the model; `deterministic`: extractive; `kept`: the stored version's wording, still attested, with new sources. */
  via: 'llm' | 'deterministic' | 'kept'
}

/** Inputs of {@link planProcedures}. */
interface PlanProceduresInput {
  projectRoot: string
  /** The project's finished sessions as steps (see readSessionSteps). */
  sessions: readonly SessionSteps[]
  /** Its current procedures. */
  existing: readonly StoredProcedure[]
  /** The session an observation id belongs to, when known. */
  sessionOf: (observationId: string) => string | undefined
  config?: Partial<ProcedureConfig>
}

/**
 * Decides what a consolidation run writes for a project's procedures.
 * For each candidate of {@link distillProcedures}:
 * - an archived stored procedure of the same kind of work: nothing (it stays archived);
 * - a stored procedure of the same kind of work (same check and files)
 *   checked against exactly the same sessions: nothing (re-running adds nothing);
 * - one whose steps are all still attested in the candidate's sessions:
 *   its wording is kept, with the new sessions as sources (a new supporting
 *   session updates it; the same text again only counts as seen again);
 * - otherwise a new version (same subject key, so it supersedes the old
 *   one), phrased by `phraser` when given and its steps verify, else the
 *   deterministic candidate.
 *
 * @returns The writes, and why the model was not used where it failed.
 */
export async function planProcedures(
  phraser: ProcedurePhraser | undefined,
  input: PlanProceduresInput,
): Promise<{ writes: ProcedureWrite[]; errors: string[] }> {
  const stored = new Map<string, StoredProcedure & { parts: ProcedureParts }>()
  for (const p of input.existing) {
    const parts = parseProcedureText(p.text)
    if (parts) stored.set(procedureKey(parts.check, parts.files), { ...p, parts })
  }
  const writes: ProcedureWrite[] = []
  const errors: string[] = []
  for (const c of distillProcedures(input.sessions, input.config)) {
    const prior = stored.get(c.key)
    const ids = new Set(c.sessions.map((s) => s.sessionId))
    // An archived procedure stays archived: writing it again would count as seeing it again and restore it.
    if (prior?.archivedAt !== undefined) continue
    if (prior) {
      const priorSessions = new Set(prior.sources.map(input.sessionOf).filter((s): s is string => s !== undefined))
      if (priorSessions.size === ids.size && [...ids].every((id) => priorSessions.has(id))) continue
      const again = verifySteps(prior.parts.steps, c.sessions)
      if (again.dropped.length === 0 && again.usable) {
        writes.push({
          key: c.key,
          text: procedureText({ ...prior.parts, files: c.parts.files, check: c.parts.check, sessions: c.sessions.length }),
          sources: again.sources,
          via: 'kept',
        })
        continue
      }
    }
    if (phraser) {
      const phrased = await phrase(phraser, input.projectRoot, c)
      if ('write' in phrased) {
        writes.push(phrased.write)
        continue
      }
      errors.push(`procedure "${c.parts.name}": ${phrased.error}`)
    }
    writes.push({ key: c.key, text: procedureText(c.parts), sources: c.sources, via: 'deterministic' })
  }
  return { writes, errors }
}

const oneLine = (text: string, max: number): string => truncateGraphemes(text.replace(/\s+/g, ' ').trim(), max)

/** The model's phrasing of a candidate, verified against its sessions; an error when it fails or nothing usable is attested. */
async function phrase(
  phraser: ProcedurePhraser,
  projectRoot: string,
  c: ProcedureCandidate,
): Promise<{ write: ProcedureWrite } | { error: string }> {
  let draft: ProcedureDraft
  try {
    ;({ draft } = await phraser.phraseProcedure({
      projectRoot,
      tasks: c.sessions.map((s) => s.prompts[0]).filter((p): p is string => p !== undefined),
      steps: c.parts.steps.map((s) => s.label),
      files: c.parts.files,
      check: c.parts.check,
    }))
  } catch (error) {
    if (!MnemoError.is(error, 'PROVIDER_FAILED')) throw error
    return { error: error.message }
  }
  const verified = verifySteps(
    draft.steps.map((s) => ({ label: s.action, ...(s.detail.trim() ? { detail: oneLine(s.detail, 160) } : {}) })),
    c.sessions,
  )
  if (!verified.usable) {
    return {
      error: `the model's steps are not attested in the source sessions (kept ${verified.steps.length}, dropped ${verified.dropped.length}: ${verified.dropped.slice(0, 3).join('; ')})`,
    }
  }
  const parts: ProcedureParts = { ...c.parts, name: oneLine(draft.name, 80), trigger: oneLine(draft.trigger, 200), steps: verified.steps }
  return { write: { key: c.key, text: procedureText(parts), sources: verified.sources, via: 'llm' } }
}

export type { ProcedureParts, ProcedureStep, SessionSteps, Step }
