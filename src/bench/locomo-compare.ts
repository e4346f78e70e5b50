import { LOCOMO_GROUPS, type LocomoReport } from './locomo.js'

/** The figures set beside each other per group: recall at 1, 5, 10, 25 and MRR. */
const FIGURES = ['recall@1', 'recall@5', 'recall@10', 'recall@25', 'mrr'] as const

/**
 * The same LoCoMo run on two stores, beside each other (`mnemo bench locomo --database … --compare`): per group the
 * figures of `sqlite` and `postgres` and their difference (PostgreSQL − SQLite), then both latencies per query. The
 * difference is what the dialects' rankings change; both ran the same questions on the same machine, one after the other.
 */
export function formatLocomoComparison(sqlite: LocomoReport, postgres: LocomoReport): string {
  const cell = (a: number, b: number): string => `${a.toFixed(3)} ${b.toFixed(3)} ${(b - a >= 0 ? '+' : '') + (b - a).toFixed(3)}`
  const head = ['group'.padEnd(7), 'n'.padStart(5), ...FIGURES.map((f) => `${f} sqlite postgres Δ`.padStart(22))].join(' ')
  const lines = [
    `LoCoMo retrieval on SQLite and PostgreSQL: ${sqlite.questions} questions, ${sqlite.conversations} conversations, ${sqlite.turns} turns`,
    head,
    '-'.repeat(head.length),
  ]
  for (const g of LOCOMO_GROUPS) {
    const a = sqlite.groups[g]
    const b = postgres.groups[g]
    lines.push([g.padEnd(7), String(a.n).padStart(5), ...FIGURES.map((f) => cell(a[f], b[f]).padStart(22))].join(' '))
  }
  lines.push(
    '',
    `latency per query, SQLite: p50 ${sqlite.latency_ms.p50.toFixed(2)} ms, p95 ${sqlite.latency_ms.p95.toFixed(2)} ms; PostgreSQL: p50 ${postgres.latency_ms.p50.toFixed(2)} ms, p95 ${postgres.latency_ms.p95.toFixed(2)} ms (ratio p50 ${(postgres.latency_ms.p50 / sqlite.latency_ms.p50).toFixed(1)})`,
    `ingest: SQLite ${sqlite.ingest_ms.toFixed(0)} ms, PostgreSQL ${postgres.ingest_ms.toFixed(0)} ms`,
  )
  return lines.join('\n')
}
