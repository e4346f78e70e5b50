#!/usr/bin/env node
// Runs `mnemo bench locomo` (built code in dist/) on the tuning half and the held-out half of the
// LoCoMo dev split and prints one line per half: R@1 R@5 R@10 R@25, cat1 R@10, S@3, p50.
// Usage: node scripts/locomo-halves.mjs [file] [--config '{"namedRoleBoost":3}']
// --config overrides fields of DEFAULT_RECALL_CONFIG for this run only (tuning experiments).
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const configAt = args.indexOf('--config')
const overrides = configAt >= 0 ? JSON.parse(args.splice(configAt, 2)[1]) : {}
const file = args[0] ?? path.resolve(root, '../shared/datasets/locomo/locomo-dev.json')
const { DEFAULT_RECALL_CONFIG } = await import(path.join(root, 'dist/engine/recall-pipeline.js'))
Object.assign(DEFAULT_RECALL_CONFIG, overrides)
const { runLocomoBench } = await import(path.join(root, 'dist/bench/locomo.js'))

const HALVES = { tune: ['conv-26', 'conv-41', 'conv-43'], held: ['conv-30', 'conv-42', 'conv-44'] }
const f = (x) => x.toFixed(3)
for (const [name, conversations] of Object.entries(HALVES)) {
  const r = await runLocomoBench(file, { conversations })
  const g = r.groups['cat1-4']
  console.log(
    `${name.padEnd(4)} R@1 ${f(g['recall@1'])} R@5 ${f(g['recall@5'])} R@10 ${f(g['recall@10'])} R@25 ${f(g['recall@25'])}` +
      ` cat1@10 ${f(r.groups.cat1['recall@10'])} cat2@10 ${f(r.groups.cat2['recall@10'])} cat3@10 ${f(r.groups.cat3['recall@10'])} cat4@10 ${f(r.groups.cat4['recall@10'])}` +
      ` S@3 ${f(g['session_recall_any@3'])} MRR ${f(g.mrr)} p50 ${r.latency_ms.p50.toFixed(2)}`,
  )
}
