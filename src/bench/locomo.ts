/**
 * The LoCoMo retrieval benchmark, as specified in docs/BENCHMARKS.md
 * ("Retrieval quality: LoCoMo"): each conversation ingested as its own corpus,
 * each question queried with its raw text, the ranking of distinct turn ids
 * scored against the normalised evidence ids. Deterministic, no LLM.
 *
 * Dataset: Maharana et al., "Evaluating Very Long-Term Conversational Memory
 * of LLM Agents", ACL 2024 (snap-research/LoCoMo, CC BY-NC 4.0). The data is
 * read from a file at run time and never bundled.
 */
import { readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseLocomo } from '../capture/locomo.js'
import { MnemoError } from '../core/errors.js'
import type { ChannelName, RecallHit } from '../core/types.js'
import type { Embedder } from '../providers/embedder.js'
import { openMnemo } from '../runtime/open-mnemo.js'
import { openScratchPostgres } from '../runtime/scratch-database.js'

// ---------------------------------------------------------------------------
// Evidence ids

const EVIDENCE_ID = /D(\d+):0*(\d+)/g

/**
 * Normalises a LoCoMo `evidence` field into the distinct turn ids it names,
 * in order of first mention (protocol step 3).
 *
 * Every string of the list is scanned with the regex `D(\d+):0*(\d+)`
 * (globally: one string may hold several ids, as in `"D8:6; D9:17"` or
 * `"D9:1 D4:4"`) and each match becomes `D<session>:<turn>` with leading zeros
 * dropped (`D30:05` → `D30:5`). Ids not in `validIds` (the conversation's
 * `dia_id`s) are dropped, as are strings with no id at all (`"D"`,
 * `"D:11:26"`). A non-array `evidence` or non-string items yield nothing.
 *
 * @param evidence - The raw `evidence` value of a `qa` item.
 * @param validIds - The `dia_id`s of every turn of the conversation.
 * @returns Distinct valid turn ids; empty when the question has no usable evidence.
 */
export function normalizeEvidence(evidence: unknown, validIds: Set<string>): string[] {
  if (!Array.isArray(evidence)) return []
  const out = new Set<string>()
  for (const item of evidence) {
    if (typeof item !== 'string') continue
    for (const m of item.matchAll(EVIDENCE_ID)) {
      const id = `D${Number(m[1])}:${Number(m[2])}`
      if (validIds.has(id)) out.add(id)
    }
  }
  return [...out]
}

/**
 * The session part of a turn id: `D12:3` → `D12`. An id without a `:` is
 * returned whole.
 */
export function sessionOf(turnId: string): string {
  const colon = turnId.indexOf(':')
  return colon < 0 ? turnId : turnId.slice(0, colon)
}

// ---------------------------------------------------------------------------
// Metrics: pure functions of a ranking of distinct ids (best first) and a gold set.

/**
 * Turn-level recall at k: |gold ∩ top-k| / |gold|. 0 when `gold` is empty.
 *
 * @param ranking - Distinct ids, best first.
 * @param gold - The relevant ids.
 */
export function recallAtK(ranking: readonly string[], gold: ReadonlySet<string>, k: number): number {
  if (gold.size === 0) return 0
  return hitsInTopK(ranking, gold, k) / gold.size
}

/** recall_all@k: 1 when every gold id is in the top k, else 0 (0 for an empty gold set). */
export function recallAllAtK(ranking: readonly string[], gold: ReadonlySet<string>, k: number): number {
  return gold.size > 0 && hitsInTopK(ranking, gold, k) === gold.size ? 1 : 0
}

/** recall_any@k: 1 when at least one gold id is in the top k, else 0. */
export function recallAnyAtK(ranking: readonly string[], gold: ReadonlySet<string>, k: number): number {
  return hitsInTopK(ranking, gold, k) > 0 ? 1 : 0
}

/**
 * Reciprocal rank: 1 / (1-based rank of the first gold id in `ranking`), 0
 * when no gold id appears. Averaged over questions this is the MRR. The
 * ranking is taken as given (the benchmark passes it already cut at k).
 */
export function reciprocalRank(ranking: readonly string[], gold: ReadonlySet<string>): number {
  const i = ranking.findIndex((id) => gold.has(id))
  return i < 0 ? 0 : 1 / (i + 1)
}

/**
 * NDCG@k with binary relevance: DCG = Σ_{i<k} rel_i / log2(i + 2) over the
 * top k (0-based i), divided by the ideal DCG of min(|gold|, k) relevant items
 * at the top. 0 when `gold` is empty.
 */
export function ndcgAtK(ranking: readonly string[], gold: ReadonlySet<string>, k: number): number {
  if (gold.size === 0) return 0
  let dcg = 0
  ranking.slice(0, k).forEach((id, i) => {
    if (gold.has(id)) dcg += 1 / Math.log2(i + 2)
  })
  let ideal = 0
  for (let i = 0; i < Math.min(gold.size, k); i++) ideal += 1 / Math.log2(i + 2)
  return dcg / ideal
}

/**
 * The session ranking induced by a turn ranking: each session (`D<s>`) in the
 * order of its first turn in `ranking`, distinct.
 */
export function sessionRanking(ranking: readonly string[]): string[] {
  return [...new Set(ranking.map(sessionOf))]
}

/**
 * Session-level recall_any@k: 1 when one of the top k sessions of
 * `sessionRanking(ranking)` holds a gold turn, else 0.
 *
 * @param ranking - Distinct turn ids, best first.
 * @param gold - Gold turn ids (mapped to their sessions here).
 */
export function sessionRecallAnyAtK(ranking: readonly string[], gold: ReadonlySet<string>, k: number): number {
  return recallAnyAtK(sessionRanking(ranking), new Set([...gold].map(sessionOf)), k)
}

function hitsInTopK(ranking: readonly string[], gold: ReadonlySet<string>, k: number): number {
  let n = 0
  for (const id of ranking.slice(0, k)) if (gold.has(id)) n++
  return n
}

/** The metrics of one question, or their means over a group; fractions 0–1. */
interface LocomoMetrics {
  'recall@1': number
  'recall@5': number
  'recall@10': number
  'recall@25': number
  'recall_all@10': number
  'recall_any@10': number
  mrr: number
  'ndcg@10': number
  'session_recall_any@1': number
  'session_recall_any@3': number
  'session_recall_any@5': number
}

/** A group's line of the report: `n` questions and the mean of each metric over them (0 for every metric when n = 0). */
type LocomoGroupReport = { n: number } & LocomoMetrics

const METRIC_KEYS = [
  'recall@1',
  'recall@5',
  'recall@10',
  'recall@25',
  'recall_all@10',
  'recall_any@10',
  'mrr',
  'ndcg@10',
  'session_recall_any@1',
  'session_recall_any@3',
  'session_recall_any@5',
] as const satisfies readonly (keyof LocomoMetrics)[]

/**
 * Every metric of the protocol for one question (step 4).
 *
 * @param ranking - Distinct turn ids, best first, already cut at the benchmark's k.
 * @param gold - The question's normalised evidence ids (non-empty for a scored question).
 */
export function scoreRanking(ranking: readonly string[], gold: ReadonlySet<string>): LocomoMetrics {
  return {
    'recall@1': recallAtK(ranking, gold, 1),
    'recall@5': recallAtK(ranking, gold, 5),
    'recall@10': recallAtK(ranking, gold, 10),
    'recall@25': recallAtK(ranking, gold, 25),
    'recall_all@10': recallAllAtK(ranking, gold, 10),
    'recall_any@10': recallAnyAtK(ranking, gold, 10),
    mrr: reciprocalRank(ranking, gold),
    'ndcg@10': ndcgAtK(ranking, gold, 10),
    'session_recall_any@1': sessionRecallAnyAtK(ranking, gold, 1),
    'session_recall_any@3': sessionRecallAnyAtK(ranking, gold, 3),
    'session_recall_any@5': sessionRecallAnyAtK(ranking, gold, 5),
  }
}

/**
 * The ranking scored for a question (protocol step 2): the distinct turn ids
 * of the hits in hit order, cut at `k`. An observation hit stands for its
 * turn (`sourceRef` = `dia_id`). A derived item would stand for the turns it
 * was derived from; recall does not return turn references for memories yet,
 * so hits without a `sourceRef` are skipped.
 */
export function turnRanking(hits: readonly Pick<RecallHit, 'sourceRef'>[], k: number): string[] {
  const out: string[] = []
  const seen = new Set<string>()
  for (const hit of hits) {
    if (out.length >= k) break
    const ref = hit.sourceRef
    if (ref === undefined || seen.has(ref)) continue
    seen.add(ref)
    out.push(ref)
  }
  return out
}

/**
 * The p-th percentile (0–100) of `values` by linear interpolation between
 * closest ranks (position (n − 1)·p/100 of the sorted values; p = 50 is the
 * median). 0 for an empty list.
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  const pos = ((sorted.length - 1) * p) / 100
  const lo = Math.floor(pos)
  const hi = Math.ceil(pos)
  const a = sorted[lo] ?? 0
  const b = sorted[hi] ?? a
  return a + (b - a) * (pos - lo)
}

// ---------------------------------------------------------------------------
// The run

/** Group names of the report: categories 1–4 pooled, then each category (5 = adversarial, never pooled). */
export const LOCOMO_GROUPS = ['cat1-4', 'cat1', 'cat2', 'cat3', 'cat4', 'cat5'] as const

/** A group name of the report. */
type LocomoGroup = (typeof LOCOMO_GROUPS)[number]

/**
 * The result of `runLocomoBench`, shaped as the JSON document of
 * docs/BENCHMARKS.md step 5 (plus the keys after `latency_ms`).
 */
export interface LocomoReport {
  dataset: 'locomo'
  /** The store each conversation ran on: a fresh in-memory SQLite database, or a fresh PostgreSQL database (`database`). */
  dialect: 'sqlite' | 'postgres'
  /** Questions scored (those with at least one valid evidence id), all categories. */
  questions: number
  /** Questions read but not scored: no evidence id left after normalisation. */
  skipped: number
  /** Per-group means; `cat1-4` pools categories 1 (multi-hop), 2 (temporal), 3 (open-domain), 4 (single-hop). */
  groups: Record<LocomoGroup, LocomoGroupReport>
  /** Wall-clock time of each `recall` call, ms: p50 (median) and p95 over the scored questions. */
  latency_ms: { p50: number; p95: number }
  /** Conversations ingested (each its own in-memory store). */
  conversations: number
  /** Turns stored as observations, all conversations. */
  turns: number
  /** Total time to parse and append the dialogue of every conversation, ms. */
  ingest_ms: number
  /** With an embedder: its space and the time spent embedding every turn (ms). */
  embedder?: string
  embed_ms?: number
  /** Depth the turn ranking was cut at. */
  k: number
  /** Scored questions whose text had no searchable word (recall refused it; scored as an empty ranking). */
  unsearchable: number
  /**
   * Categories 1–4 pooled per conversation, keyed by `sample_id` (`conv-26`; `sample-<i>` when a sample has none):
   * lets a change tuned on some conversations be checked on the others (held-out halves, leave-one-out).
   */
  by_conversation: Record<string, LocomoGroupReport>
}

/** Options of `runLocomoBench`. */
interface LocomoBenchOptions {
  /** Read at most this many questions (in file order, skipped ones included), ingesting only the conversations they need. Default: all. */
  limitQuestions?: number
  /** Depth at which the ranking of distinct turn ids is cut. Default 25 (the deepest metric). */
  k?: number
  /** Recall channels to use (ablation, e.g. `['bm25']`). Default: all. */
  channels?: readonly ChannelName[]
  /**
   * Only these conversations (`sample_id`s, e.g. `['conv-26', 'conv-41']`; `sample-<i>` for a sample
   * without one): tune on some, check on the others. Default: all. Ids that match no sample are ignored.
   */
  conversations?: readonly string[]
  /**
   * An embedder for the `embedding` channel, shared by every conversation. Each
   * conversation's turns are all embedded (`reindex`) before its first question;
   * that time is reported in `embed_ms`, not in the query latencies.
   */
  embedder?: Embedder
  /**
   * Run on PostgreSQL instead of an in-memory SQLite store: `postgres://…` of a role allowed to CREATE DATABASE. Each
   * conversation gets a fresh database of its own there (`openScratchPostgres`), dropped after its questions.
   * Default: SQLite.
   */
  database?: string
}

/** Hits requested per query: the recall maximum, so that 25 distinct turn ids are available. */
const RECALL_LIMIT = 100

interface Scored {
  category: number
  conversation: string
  metrics: LocomoMetrics
}

/**
 * Runs the LoCoMo retrieval benchmark (docs/BENCHMARKS.md, "Retrieval
 * quality: LoCoMo") on a LoCoMo-format JSON file.
 *
 * For each conversation: opens a fresh in-memory mnemo, ingests only the
 * dialogue (`parseLocomo([sample])` then `append`: one session per
 * `session_N`, one observation per turn; the `qa`, `observation`,
 * `session_summary` and `event_summary` fields are never ingested), then
 * queries every question's raw text restricted to that conversation's
 * project with limit 100, scores the first `k` distinct turn ids against the
 * normalised evidence, and times each `recall` call with `performance.now()`.
 *
 * @param file - Path of a LoCoMo JSON file (an array of samples).
 * @throws {Error} The file cannot be read or is not a JSON array.
 */
export async function runLocomoBench(file: string, options: LocomoBenchOptions = {}): Promise<LocomoReport> {
  const k = options.k ?? 25
  const limit = options.limitQuestions ?? Number.POSITIVE_INFINITY
  const only = options.conversations ? new Set(options.conversations) : undefined
  if (!Number.isInteger(k) || k < 1 || k > RECALL_LIMIT) throw new RangeError(`k must be an integer 1–${RECALL_LIMIT} (got ${k})`)
  const data: unknown = JSON.parse(readFileSync(file, 'utf8'))
  if (!Array.isArray(data)) throw new Error(`${file}: LoCoMo data must be a JSON array of samples`)

  const scored: Scored[] = []
  const latencies: number[] = []
  let read = 0
  let skipped = 0
  let conversations = 0
  let turns = 0
  let ingestMs = 0
  let unsearchable = 0
  let embedMs = 0
  const home = path.join(os.tmpdir(), 'mnemo-bench-locomo')

  for (const [index, sample] of data.entries()) {
    if (read >= limit) break
    if (!isRecord(sample)) continue
    const conversation = typeof sample['sample_id'] === 'string' ? sample['sample_id'] : `sample-${index}`
    if (only && !only.has(conversation)) continue
    const qa = Array.isArray(sample['qa']) ? sample['qa'].slice(0, Math.max(0, limit - read)) : []
    read += qa.length
    const validIds = conversationTurnIds(sample['conversation'])

    // Only the recall weights are taken from the environment (MNEMO_RECALL_WEIGHTS), for measured tuning runs.
    const scratch = options.database ? await openScratchPostgres(options.database, Date.now) : undefined
    const mnemo = openMnemo({
      ...(scratch ? { store: scratch.store } : {}),
      dbPath: ':memory:',
      home,
      env: { MNEMO_RECALL_WEIGHTS: process.env['MNEMO_RECALL_WEIGHTS'] },
      timeZone: 'UTC',
      ...(options.embedder ? { embedder: options.embedder } : {}),
    })
    try {
      const engine = mnemo.engine
      const t0 = performance.now()
      const parsed = parseLocomo([sample])
      await engine.append(parsed.events)
      ingestMs += performance.now() - t0
      conversations++
      turns += parsed.events.length
      const root = parsed.events[0]?.project.root
      const projectIds = (await engine.listProjects()).filter((p) => p.root === root).map((p) => p.id)
      if (options.embedder && projectIds.length > 0) {
        const e0 = performance.now()
        await engine.reindex({ projectIds })
        embedMs += performance.now() - e0
      }

      for (const item of qa) {
        if (!isRecord(item)) {
          skipped++
          continue
        }
        const gold = new Set(normalizeEvidence(item['evidence'], validIds))
        const question = item['question']
        if (gold.size === 0 || typeof question !== 'string') {
          skipped++
          continue
        }
        let hits: RecallHit[] = []
        const start = performance.now()
        try {
          // No project means no turn was stored: the ranking stays empty (an empty projectIds would search everything).
          if (projectIds.length > 0)
            hits = await engine.recall(question, {
              projectIds,
              limit: RECALL_LIMIT,
              ...(options.channels ? { channels: options.channels } : {}),
            })
        } catch (err) {
          if (!MnemoError.is(err, 'INVALID_INPUT')) throw err
          unsearchable++
        }
        latencies.push(performance.now() - start)
        scored.push({ category: Number(item['category']), conversation, metrics: scoreRanking(turnRanking(hits, k), gold) })
      }
    } finally {
      await mnemo.close()
      await scratch?.drop()
    }
  }

  const groups = {} as Record<LocomoGroup, LocomoGroupReport>
  for (const g of LOCOMO_GROUPS) {
    const members = scored.filter((s) => (g === 'cat1-4' ? s.category >= 1 && s.category <= 4 : `cat${s.category}` === g))
    groups[g] = meanOf(members.map((s) => s.metrics))
  }
  const byConversation: Record<string, LocomoGroupReport> = {}
  for (const c of new Set(scored.map((s) => s.conversation))) {
    byConversation[c] = meanOf(scored.filter((s) => s.conversation === c && s.category >= 1 && s.category <= 4).map((s) => s.metrics))
  }
  return {
    dataset: 'locomo',
    dialect: options.database ? 'postgres' : 'sqlite',
    questions: scored.length,
    skipped,
    groups,
    latency_ms: { p50: percentile(latencies, 50), p95: percentile(latencies, 95) },
    conversations,
    turns,
    ingest_ms: ingestMs,
    ...(options.embedder ? { embedder: options.embedder.spaceId, embed_ms: embedMs } : {}),
    k,
    unsearchable,
    by_conversation: byConversation,
  }
}

function meanOf(rows: readonly LocomoMetrics[]): LocomoGroupReport {
  const out = { n: rows.length } as LocomoGroupReport
  for (const key of METRIC_KEYS) out[key] = rows.length === 0 ? 0 : rows.reduce((sum, r) => sum + r[key], 0) / rows.length
  return out
}

/** Every turn `dia_id` of a sample's `conversation` (its `session_N` lists). */
function conversationTurnIds(conversation: unknown): Set<string> {
  const ids = new Set<string>()
  if (!isRecord(conversation)) return ids
  for (const [key, turns] of Object.entries(conversation)) {
    if (!/^session_\d+$/.test(key) || !Array.isArray(turns)) continue
    for (const t of turns) if (isRecord(t) && typeof t['dia_id'] === 'string') ids.add(t['dia_id'])
  }
  return ids
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

// ---------------------------------------------------------------------------
// The table

const COLUMNS: readonly [string, keyof LocomoMetrics][] = [
  ['R@1', 'recall@1'],
  ['R@5', 'recall@5'],
  ['R@10', 'recall@10'],
  ['R@25', 'recall@25'],
  ['all@10', 'recall_all@10'],
  ['any@10', 'recall_any@10'],
  ['MRR', 'mrr'],
  ['NDCG@10', 'ndcg@10'],
  ['S@1', 'session_recall_any@1'],
  ['S@3', 'session_recall_any@3'],
  ['S@5', 'session_recall_any@5'],
]

/**
 * The human table of a report (step 5): one fixed-width row per group
 * (cat1-4, cat1…cat5) with n and each metric as a fraction to 3 decimals
 * (S@k = session-level recall_any@k), then the query latency, the ingest time,
 * the skipped count and the cat1-4 R@10 of each conversation.
 */
export function formatLocomoReport(report: LocomoReport): string {
  const head = ['group'.padEnd(7), 'n'.padStart(5), ...COLUMNS.map(([label]) => label.padStart(7))].join(' ')
  const lines = [
    `LoCoMo retrieval: ${report.questions} questions, ${report.conversations} conversations, ${report.turns} turns, ranking cut at ${report.k} turn ids`,
    head,
    '-'.repeat(head.length),
  ]
  for (const g of LOCOMO_GROUPS) {
    const row = report.groups[g]
    lines.push([g.padEnd(7), String(row.n).padStart(5), ...COLUMNS.map(([, key]) => row[key].toFixed(3).padStart(7))].join(' '))
  }
  lines.push(
    '',
    `latency per query: p50 ${report.latency_ms.p50.toFixed(2)} ms, p95 ${report.latency_ms.p95.toFixed(2)} ms; ingest ${report.ingest_ms.toFixed(0)} ms${report.embedder ? `; embedder ${report.embedder}, embedding every turn ${report.embed_ms?.toFixed(0)} ms` : ''}`,
    `skipped (no valid evidence): ${report.skipped}${report.unsearchable > 0 ? `; unsearchable questions: ${report.unsearchable}` : ''}`,
    `cat1-4 R@10 by conversation: ${Object.entries(report.by_conversation)
      .map(([c, r]) => `${c} ${r['recall@10'].toFixed(3)} (n ${r.n})`)
      .join(', ')}`,
  )
  return lines.join('\n')
}
