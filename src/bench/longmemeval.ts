/**
 * The LongMemEval retrieval benchmark, as specified in docs/BENCHMARKS.md
 * ("Retrieval quality: LongMemEval"): each question's haystack ingested as its
 * own corpus (user turns only), the question queried with its raw text, the
 * ranking of distinct turn ids scored at turn level and, through the order in
 * which sessions first appear in it, at session level. Deterministic, no LLM.
 *
 * Dataset: Wu et al., "LongMemEval: Benchmarking Chat Assistants on Long-Term
 * Interactive Memory", ICLR 2025 (xiaowu0162/LongMemEval). The data is read
 * from a file at run time and never bundled.
 *
 * Scoring follows the official retrieval evaluation (`src/retrieval/
 * eval_utils.py`, `run_retrieval.py`): recall_any@k, recall_all@k and
 * NDCG@k ("ndcg_any") for k ∈ {1, 3, 5, 10, 30, 50}, with the official DCG
 * (the first two ranks both weigh 1, rank r ≥ 2 weighs 1 / log2(r)), turn ids
 * numbered 1-based over all turns of a session, abstention (`_abs`) questions
 * left out, and answer sessions with no user-side `has_answer` turn not
 * counted as gold (the official script relabels them `noans`).
 */
import { readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import type { LocomoTurnPayload } from '../capture/locomo-turn.js'
import { namedProject } from '../capture/project.js'
import { sanitizePayload } from '../capture/sanitize.js'
import { MnemoError } from '../core/errors.js'
import type { ChannelName, EventInput, RecallHit } from '../core/types.js'
import { openMnemo } from '../runtime/open-mnemo.js'
import { percentile, recallAllAtK, recallAnyAtK, turnRanking } from './locomo.js'

// ---------------------------------------------------------------------------
// The file format

/** One turn of a haystack session. */
interface LongMemEvalTurn {
  role: 'user' | 'assistant'
  content: string
  /** True on the turns that hold the evidence of the answer. */
  has_answer?: boolean
}

/** One question of a LongMemEval file, with its own haystack. */
export interface LongMemEvalInstance {
  question_id: string
  question_type: string
  question: string
  /** `"2023/05/30 (Tue) 23:40"`, read as UTC. */
  question_date: string
  haystack_sessions: LongMemEvalTurn[][]
  /** One id per haystack session; evidence sessions' ids are listed in `answer_session_ids`. */
  haystack_session_ids: string[]
  /** One date per haystack session, same format as `question_date`. */
  haystack_dates: string[]
  answer_session_ids: string[]
  /** A string or a number in the released files; not used for retrieval. */
  answer: unknown
}

const LME_DATE = /^(\d{4})\/(\d{1,2})\/(\d{1,2}) \([A-Za-z]{3}\) (\d{1,2}):(\d{2})$/

/**
 * Parses a LongMemEval date (`"2023/05/20 (Sat) 02:21"`) as UTC. The weekday
 * in parentheses is not checked. Returns epoch ms, or `undefined` when the
 * text is not of that form or names an impossible date or time.
 */
export function parseLongMemEvalDate(text: string): number | undefined {
  const m = LME_DATE.exec(text.trim())
  if (!m) return undefined
  const [year, month, day, hour, minute] = m.slice(1).map(Number) as [number, number, number, number, number]
  const ms = Date.UTC(year, month - 1, day, hour, minute)
  const d = new Date(ms)
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day || hour > 23 || minute > 59) return undefined
  return ms
}

/**
 * Checks that `data` is an array of LongMemEval instances and returns it
 * typed. Every instance needs string `question_id`, `question_type`,
 * `question` and `question_date` (a parsable date), an `answer`, and
 * `haystack_sessions` (lists of `{role: 'user'|'assistant', content: string,
 * has_answer?: boolean}`), `haystack_session_ids` and `haystack_dates`
 * (parsable) of the same length, and `answer_session_ids` (strings).
 *
 * @param source - Named in error messages (the file path).
 * @throws {Error} Naming the first bad instance's index and field, e.g.
 *   `mini.json: instance 2: haystack_sessions[1][3].role must be "user" or "assistant"`.
 */
export function validateLongMemEval(data: unknown, source = 'LongMemEval data'): LongMemEvalInstance[] {
  if (!Array.isArray(data)) throw new Error(`${source}: LongMemEval data must be a JSON array of instances`)
  for (const [i, inst] of data.entries()) {
    const fail = (field: string, what: string): never => {
      throw new Error(`${source}: instance ${i}: ${field} ${what}`)
    }
    if (!isRecord(inst)) return fail('(the instance)', 'must be an object')
    for (const field of ['question_id', 'question_type', 'question', 'question_date'] as const) {
      if (typeof inst[field] !== 'string') fail(field, 'must be a string')
    }
    if (parseLongMemEvalDate(inst['question_date'] as string) === undefined)
      fail('question_date', `is not a date like "2023/05/20 (Sat) 02:21" (got ${JSON.stringify(inst['question_date'])})`)
    if (!('answer' in inst) || inst['answer'] === undefined) fail('answer', 'is missing')
    const sessions = inst['haystack_sessions']
    if (!Array.isArray(sessions)) return fail('haystack_sessions', 'must be an array of sessions')
    for (const [s, session] of sessions.entries()) {
      if (!Array.isArray(session)) return fail(`haystack_sessions[${s}]`, 'must be an array of turns')
      for (const [t, turn] of session.entries()) {
        const at = `haystack_sessions[${s}][${t}]`
        if (!isRecord(turn)) return fail(at, 'must be an object')
        if (turn['role'] !== 'user' && turn['role'] !== 'assistant')
          fail(`${at}.role`, `must be "user" or "assistant" (got ${JSON.stringify(turn['role'])})`)
        if (typeof turn['content'] !== 'string') fail(`${at}.content`, 'must be a string')
        if (turn['has_answer'] !== undefined && typeof turn['has_answer'] !== 'boolean')
          fail(`${at}.has_answer`, 'must be a boolean when present')
      }
    }
    const ids = inst['haystack_session_ids']
    if (!Array.isArray(ids)) return fail('haystack_session_ids', 'must be an array of strings')
    ids.forEach((id, s) => {
      if (typeof id !== 'string') fail(`haystack_session_ids[${s}]`, 'must be a string')
    })
    if (ids.length !== sessions.length) fail('haystack_session_ids', `has ${ids.length} ids for ${sessions.length} sessions`)
    const dates = inst['haystack_dates']
    if (!Array.isArray(dates)) return fail('haystack_dates', 'must be an array of strings')
    dates.forEach((date, s) => {
      if (typeof date !== 'string' || parseLongMemEvalDate(date) === undefined)
        fail(`haystack_dates[${s}]`, `is not a date like "2023/05/20 (Sat) 02:21" (got ${JSON.stringify(date)})`)
    })
    if (dates.length !== sessions.length) fail('haystack_dates', `has ${dates.length} dates for ${sessions.length} sessions`)
    const answers = inst['answer_session_ids']
    if (!Array.isArray(answers)) return fail('answer_session_ids', 'must be an array of strings')
    answers.forEach((id, s) => {
      if (typeof id !== 'string') fail(`answer_session_ids[${s}]`, 'must be a string')
    })
  }
  return data as LongMemEvalInstance[]
}

// ---------------------------------------------------------------------------
// Ids and gold sets

/**
 * The id of a turn: `<session_id>#<n>` with n its 1-based position among all
 * turns of the session, assistant turns included (the official numbering).
 * Stored as the turn's `dia_id`, so recall hits carry it as `sourceRef`.
 */
export function longMemEvalTurnId(sessionId: string, position: number): string {
  return `${sessionId}#${position}`
}

/** The session part of a turn id (everything before the last `#`); an id without `#` is returned whole. */
export function sessionOfTurnId(turnId: string): string {
  const hash = turnId.lastIndexOf('#')
  return hash < 0 ? turnId : turnId.slice(0, hash)
}

/** True for an abstention question (its id ends with `_abs`); those are never scored. */
export function isAbstention(questionId: string): boolean {
  return questionId.endsWith('_abs')
}

/**
 * The gold sets of an instance.
 *
 * - `turn`: ids of the user turns with `has_answer: true`.
 * - `session`: the `answer_session_ids` present in the haystack that hold at
 *   least one user turn with `has_answer: true` (an answer session whose
 *   evidence is only on the assistant side has no user-side evidence; the
 *   official scorer relabels it as a non-answer session).
 *
 * An empty set means the question is skipped at that level.
 */
export function longMemEvalGold(instance: LongMemEvalInstance): { session: Set<string>; turn: Set<string> } {
  const turn = new Set<string>()
  const withUserEvidence = new Set<string>()
  instance.haystack_sessions.forEach((session, s) => {
    const sid = instance.haystack_session_ids[s] ?? ''
    session.forEach((t, i) => {
      if (t.role === 'user' && t.has_answer === true) {
        turn.add(longMemEvalTurnId(sid, i + 1))
        withUserEvidence.add(sid)
      }
    })
  })
  const session = new Set(instance.answer_session_ids.filter((id) => withUserEvidence.has(id)))
  return { session, turn }
}

// ---------------------------------------------------------------------------
// Metrics

/** The cut-offs of the official evaluation. */
export const LONGMEMEVAL_KS = [1, 3, 5, 10, 30, 50] as const

/** A cut-off of the official evaluation. */
type LongMemEvalK = (typeof LONGMEMEVAL_KS)[number]

/** The metrics of one question at one level, or their means over a group; fractions 0–1. Names as in the official log. */
type LongMemEvalMetrics = Record<`recall_any@${LongMemEvalK}` | `recall_all@${LongMemEvalK}` | `ndcg_any@${LongMemEvalK}`, number>

/** The two levels of the report. */
export const LONGMEMEVAL_LEVELS = ['session', 'turn'] as const

/** A level of the report. */
type LongMemEvalLevel = (typeof LONGMEMEVAL_LEVELS)[number]

/**
 * DCG of the official evaluation over the first k relevances: the first item
 * counts in full and the item at 0-based position i ≥ 1 weighs 1 / log2(i + 1)
 * (so ranks 1 and 2 both weigh 1, rank 3 weighs 1 / log2(3)).
 */
function officialDcg(relevances: readonly number[], k: number): number {
  let sum = 0
  relevances.slice(0, k).forEach((rel, i) => {
    sum += i === 0 ? rel : rel / Math.log2(i + 1)
  })
  return sum
}

/**
 * NDCG@k as the official LongMemEval scorer computes it (`ndcg_any@k`):
 * binary relevance, the official DCG of the top k of `ranking` divided by the
 * DCG of min(|gold|, k) relevant items at the top. 0 when `gold` is empty.
 * Gold ids are taken to be in the corpus (true of `longMemEvalGold`).
 *
 * Example: the only gold item at rank 2 gives 1; at rank 3, 1 / log2(3) ≈ 0.631.
 */
export function ndcgAnyAtK(ranking: readonly string[], gold: ReadonlySet<string>, k: number): number {
  if (gold.size === 0) return 0
  const actual = officialDcg(
    ranking.map((id) => (gold.has(id) ? 1 : 0)),
    k,
  )
  const ideal = officialDcg(
    Array.from({ length: Math.min(gold.size, k) }, () => 1),
    k,
  )
  return actual / ideal
}

/** The session ranking induced by a turn ranking: each session in the order of its first turn, distinct. */
export function sessionRankingOf(turnIds: readonly string[]): string[] {
  return [...new Set(turnIds.map(sessionOfTurnId))]
}

/**
 * recall_any@k, recall_all@k and ndcg_any@k for every official k, for one
 * question at one level.
 *
 * @param ranking - Distinct ids (turn ids, or session ids), best first.
 * @param gold - The level's gold ids (non-empty for a scored question).
 */
export function scoreLongMemEvalRanking(ranking: readonly string[], gold: ReadonlySet<string>): LongMemEvalMetrics {
  const out = {} as LongMemEvalMetrics
  for (const k of LONGMEMEVAL_KS) {
    out[`recall_any@${k}`] = recallAnyAtK(ranking, gold, k)
    out[`recall_all@${k}`] = recallAllAtK(ranking, gold, k)
    out[`ndcg_any@${k}`] = ndcgAnyAtK(ranking, gold, k)
  }
  return out
}

const METRIC_KEYS = LONGMEMEVAL_KS.flatMap((k) => [`recall_any@${k}`, `recall_all@${k}`, `ndcg_any@${k}`] as const)

// ---------------------------------------------------------------------------
// The run

/** A group's line: `n` questions and the mean of each metric over them (0 for every metric when n = 0). */
type LongMemEvalGroupReport = { n: number } & LongMemEvalMetrics

/** One level of the report: every scored question, then per `question_type` (sorted by name). */
interface LongMemEvalLevelReport {
  overall: LongMemEvalGroupReport
  by_type: Record<string, LongMemEvalGroupReport>
}

/** The result of `runLongMemEvalBench`. */
export interface LongMemEvalReport {
  dataset: 'longmemeval'
  /** Instances read (all of them, or the first `limitQuestions`). */
  instances: number
  /** Questions queried: scored at the session level, the turn level or both. */
  questions: number
  /** Instances not scored: abstention questions, and (per level, abstentions excluded) questions with no user-side evidence. */
  skipped: { abstention: number; no_user_evidence: Record<LongMemEvalLevel, number> }
  /** Means per level; at the session level the ranking is the order in which sessions first appear in the turn ranking. */
  levels: Record<LongMemEvalLevel, LongMemEvalLevelReport>
  /** Wall-clock time of each `recall` call, ms: p50 (median) and p95 over the queried questions. */
  latency_ms: { p50: number; p95: number }
  /** Haystack sessions ingested, all questions. */
  sessions: number
  /** User turns stored as observations, all questions. */
  turns: number
  /** Total time to build and append the events of every haystack, ms. */
  ingest_ms: number
  /** Queried questions whose text had no searchable word (recall refused it; scored as an empty ranking). */
  unsearchable: number
}

/** Options of `runLongMemEvalBench`. */
interface LongMemEvalBenchOptions {
  /** Read at most this many instances (in file order, skipped ones included). Default: all. */
  limitQuestions?: number
  /** Recall channels to use (ablation, e.g. `['bm25']`). Default: all. */
  channels?: readonly ChannelName[]
}

/** Hits requested per query: the recall maximum. */
const RECALL_LIMIT = 100

interface Scored {
  type: string
  metrics: LongMemEvalMetrics
}

/**
 * The events of one instance's haystack: user turns only (the official
 * corpus), each a `locomo-turn` event (speaker = role, `dia_id` = its turn id,
 * `index` = its 0-based position among all turns of the session) in the
 * session `<question_id>:<n>:<session_id>`, timed at the session date plus one
 * second per position, all in the project `longmemeval:<question_id>`.
 */
export function longMemEvalEvents(instance: LongMemEvalInstance): EventInput[] {
  const project = namedProject('longmemeval', instance.question_id)
  const events: EventInput[] = []
  instance.haystack_sessions.forEach((session, s) => {
    const sid = instance.haystack_session_ids[s] ?? `session-${s}`
    const startedAt = parseLongMemEvalDate(instance.haystack_dates[s] ?? '') ?? 0
    // The haystack position keeps keys distinct should a session id repeat.
    const sessionKey = `${instance.question_id}:${s}:${sid}`
    session.forEach((turn, index) => {
      if (turn.role !== 'user') return
      const id = longMemEvalTurnId(sid, index + 1)
      const payload: LocomoTurnPayload = { speaker: turn.role, dia_id: id, text: turn.content, index }
      events.push({
        agent: 'locomo',
        format: 'locomo-turn',
        type: 'turn',
        sessionKey,
        project,
        ts: startedAt + index * 1000,
        idemKey: `longmemeval:${sessionKey}#${index + 1}`,
        payload: sanitizePayload(payload),
        sessionStartedAt: startedAt,
      })
    })
  })
  return events
}

/**
 * Runs the LongMemEval retrieval benchmark (docs/BENCHMARKS.md, "Retrieval
 * quality: LongMemEval") on a LongMemEval-format JSON file.
 *
 * For each question that is not an abstention and has user-side evidence at
 * one level at least: opens a fresh in-memory mnemo whose clock stands at the
 * question date, ingests the haystack's user turns (`longMemEvalEvents`, one
 * session per haystack session with its date), queries the raw question with
 * limit 100, times the `recall` call, and scores the distinct turn ids of the
 * hits (turn level) and the sessions in order of first appearance (session
 * level) against that level's gold set. Questions skipped at both levels are
 * not ingested.
 *
 * @param file - Path of a LongMemEval JSON file (an array of instances).
 * @throws {Error} The file cannot be read, is not JSON, or fails `validateLongMemEval`.
 */
export async function runLongMemEvalBench(file: string, options: LongMemEvalBenchOptions = {}): Promise<LongMemEvalReport> {
  const limit = options.limitQuestions ?? Number.POSITIVE_INFINITY
  const data = validateLongMemEval(JSON.parse(readFileSync(file, 'utf8')) as unknown, file)
  const instances = data.slice(0, Number.isFinite(limit) ? Math.max(0, limit) : data.length)

  const scored: Record<LongMemEvalLevel, Scored[]> = { session: [], turn: [] }
  const skipped = { abstention: 0, no_user_evidence: { session: 0, turn: 0 } }
  const latencies: number[] = []
  let sessions = 0
  let turns = 0
  let ingestMs = 0
  let unsearchable = 0
  const home = path.join(os.tmpdir(), 'mnemo-bench-longmemeval')

  for (const instance of instances) {
    if (isAbstention(instance.question_id)) {
      skipped.abstention++
      continue
    }
    const gold = longMemEvalGold(instance)
    for (const level of LONGMEMEVAL_LEVELS) if (gold[level].size === 0) skipped.no_user_evidence[level]++
    if (gold.session.size === 0 && gold.turn.size === 0) continue

    const asked = parseLongMemEvalDate(instance.question_date) ?? 0
    // Only the recall weights are taken from the environment (MNEMO_RECALL_WEIGHTS), for measured tuning runs.
    const mnemo = openMnemo({
      dbPath: ':memory:',
      home,
      env: { MNEMO_RECALL_WEIGHTS: process.env['MNEMO_RECALL_WEIGHTS'] },
      timeZone: 'UTC',
      clock: { now: () => asked },
    })
    try {
      const engine = mnemo.engine
      const t0 = performance.now()
      const events = longMemEvalEvents(instance)
      await engine.append(events)
      ingestMs += performance.now() - t0
      sessions += instance.haystack_sessions.length
      turns += events.length
      const root = events[0]?.project.root
      const projectIds = (await engine.listProjects()).filter((p) => p.root === root).map((p) => p.id)

      let hits: RecallHit[] = []
      const start = performance.now()
      try {
        // No project means no turn was stored: the ranking stays empty (an empty projectIds would search everything).
        if (projectIds.length > 0)
          hits = await engine.recall(instance.question, {
            projectIds,
            limit: RECALL_LIMIT,
            ...(options.channels ? { channels: options.channels } : {}),
          })
      } catch (err) {
        if (!MnemoError.is(err, 'INVALID_INPUT')) throw err
        unsearchable++
      }
      latencies.push(performance.now() - start)

      const turnIds = turnRanking(hits, RECALL_LIMIT)
      if (gold.turn.size > 0) scored.turn.push({ type: instance.question_type, metrics: scoreLongMemEvalRanking(turnIds, gold.turn) })
      if (gold.session.size > 0)
        scored.session.push({ type: instance.question_type, metrics: scoreLongMemEvalRanking(sessionRankingOf(turnIds), gold.session) })
    } finally {
      await mnemo.close()
    }
  }

  return {
    dataset: 'longmemeval',
    instances: instances.length,
    questions: latencies.length,
    skipped,
    levels: { session: levelReport(scored.session), turn: levelReport(scored.turn) },
    latency_ms: { p50: percentile(latencies, 50), p95: percentile(latencies, 95) },
    sessions,
    turns,
    ingest_ms: ingestMs,
    unsearchable,
  }
}

function levelReport(rows: readonly Scored[]): LongMemEvalLevelReport {
  const types = [...new Set(rows.map((r) => r.type))].sort()
  const byType: Record<string, LongMemEvalGroupReport> = {}
  for (const t of types) byType[t] = meanOf(rows.filter((r) => r.type === t).map((r) => r.metrics))
  return { overall: meanOf(rows.map((r) => r.metrics)), by_type: byType }
}

function meanOf(rows: readonly LongMemEvalMetrics[]): LongMemEvalGroupReport {
  const out = { n: rows.length } as LongMemEvalGroupReport
  for (const key of METRIC_KEYS) out[key] = rows.length === 0 ? 0 : rows.reduce((sum, r) => sum + r[key], 0) / rows.length
  return out
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

// ---------------------------------------------------------------------------
// The table

const FAMILIES = [
  ['recall_any', 'recall_any'],
  ['recall_all', 'recall_all'],
  ['NDCG', 'ndcg_any'],
] as const

/**
 * The human table of a report: per level (session, then turn), one block per
 * group (overall, then each question type) with n and three rows —
 * recall_any, recall_all, NDCG — of fractions to 3 decimals at
 * k = 1, 3, 5, 10, 30, 50; then the skip counts and the recall latency.
 */
export function formatLongMemEvalReport(report: LongMemEvalReport): string {
  const groupNames = LONGMEMEVAL_LEVELS.flatMap((l) => ['overall', ...Object.keys(report.levels[l].by_type)])
  const width = Math.max(7, ...groupNames.map((g) => g.length))
  const head = ['group'.padEnd(width), 'n'.padStart(5), 'metric'.padEnd(10), ...LONGMEMEVAL_KS.map((k) => `@${k}`.padStart(6))].join(' ')
  const s = report.skipped
  const lines = [
    `LongMemEval retrieval: ${report.instances} instances read, ${report.questions} questions queried; ${report.sessions} sessions, ${report.turns} user turns ingested`,
  ]
  for (const level of LONGMEMEVAL_LEVELS) {
    const lr = report.levels[level]
    lines.push(
      '',
      level === 'session' ? 'Session level (sessions in order of first appearance among the ranked turns)' : 'Turn level (user turns)',
      head,
      '-'.repeat(head.length),
    )
    const groups: [string, LongMemEvalGroupReport][] = [['overall', lr.overall], ...Object.entries(lr.by_type)]
    for (const [name, row] of groups) {
      FAMILIES.forEach(([label, key], i) => {
        lines.push(
          [
            (i === 0 ? name : '').padEnd(width),
            (i === 0 ? String(row.n) : '').padStart(5),
            label.padEnd(10),
            ...LONGMEMEVAL_KS.map((k) => row[`${key}@${k}`].toFixed(3).padStart(6)),
          ].join(' '),
        )
      })
    }
  }
  lines.push(
    '',
    `skipped: ${s.abstention} abstention (_abs); no user-side evidence: ${s.no_user_evidence.session} at session level, ${s.no_user_evidence.turn} at turn level${report.unsearchable > 0 ? `; unsearchable questions: ${report.unsearchable}` : ''}`,
    `latency per query: p50 ${report.latency_ms.p50.toFixed(2)} ms, p95 ${report.latency_ms.p95.toFixed(2)} ms; ingest ${report.ingest_ms.toFixed(0)} ms`,
  )
  return lines.join('\n')
}
