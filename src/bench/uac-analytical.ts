import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { answerValueText, type FactAnswer } from '../core/facts/fact-answer.js'
import type { MnemoEngine } from '../engine/mnemo.js'
import { UAC_QUERIES } from './uac-queries.js'
import { scoreUac, type UacAnswerKind } from './uac-score.js'

/** One question of the UaC analytical split. */
interface UacQuestion {
  case_id: string
  user_id: string
  question_id: string
  question: string
  answer_kind: UacAnswerKind
  gold: unknown
}

/** One scored answer. */
interface UacResult {
  caseId: string
  query: string
  prediction: string
  gold: unknown
  correct: boolean
  answer: FactAnswer
}

/**
 * The dataset folder: `MNEMO_SHARED_DIR/datasets/uac-analytical`, else `../shared/datasets/uac-analytical` beside the
 * repository or its parent folder (a worktree); undefined when none exists.
 */
export function findUacDir(repoRoot: string): string | undefined {
  const candidates = [
    ...(process.env['MNEMO_SHARED_DIR'] ? [path.join(process.env['MNEMO_SHARED_DIR'], 'datasets/uac-analytical')] : []),
    path.resolve(repoRoot, '../shared/datasets/uac-analytical'),
    path.resolve(repoRoot, '../../shared/datasets/uac-analytical'),
  ]
  return candidates.find((dir) => existsSync(path.join(dir, 'questions.jsonl')))
}

/** Reads the split: each user's records and the questions. */
export function readUac(dir: string): { users: { user_id: string; records: Record<string, unknown>[] }[]; questions: UacQuestion[] } {
  const lines = (file: string): unknown[] =>
    readFileSync(path.join(dir, file), 'utf8')
      .split('\n')
      .filter((l) => l.trim().length > 0)
      .map((l) => JSON.parse(l) as unknown)
  return {
    users: lines('users.jsonl') as { user_id: string; records: Record<string, unknown>[] }[],
    questions: lines('questions.jsonl') as UacQuestion[],
  }
}

/** Ingests every user's records as a collection named by its user id (provenance `import`). */
export async function ingestUac(
  engine: MnemoEngine,
  users: readonly { user_id: string; records: Record<string, unknown>[] }[],
): Promise<void> {
  for (const u of users) await engine.facts.add(u.user_id, u.records, { provenance: { source: 'import', file: 'users.jsonl' } })
}

/**
 * The prediction text for an answer: its bare value (`answerValueText`); for a `string` question a group or tie answer
 * of one value is that value, and one of several is them all, comma-joined (which the scorer then judges).
 */
export function predictionFor(kind: UacAnswerKind, answer: FactAnswer): string {
  if (kind === 'string' && Array.isArray(answer.value)) return (answer.value as unknown[]).map(String).join(', ')
  return answerValueText(answer)
}

/** Answers each question with its hand-written query and scores it with the published scorer. */
export async function runUac(engine: MnemoEngine, questions: readonly UacQuestion[]): Promise<UacResult[]> {
  const results: UacResult[] = []
  for (const q of questions) {
    const query = UAC_QUERIES[q.case_id]
    if (query === undefined) throw new Error(`no query written for ${q.case_id}`)
    const answer = await engine.facts.query(query)
    const prediction = predictionFor(q.answer_kind, answer)
    results.push({ caseId: q.case_id, query, prediction, gold: q.gold, correct: scoreUac(q.answer_kind, prediction, q.gold), answer })
  }
  return results
}
