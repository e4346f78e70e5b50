#!/usr/bin/env node
// Fits the weights of the linear re-ranker (src/retrieval/rerank.ts) on the tuning half of the
// LoCoMo dev split and reports both halves. Built code in dist/ (run `npm run build` first).
//
// 1. Runs the LoCoMo bench per conversation with the re-ranker in identity mode (weights {fused: 1}: the fused order)
//    and its trace hook on, caching every question's head (depth candidates: turn id, features) to
//    /tmp/mnemo-rerank-features-<depth>.json (never into the repository: the data is CC BY-NC).
// 2. Fits w by pairwise logistic regression (a linear RankNet: Burges et al., ICML 2005) on the
//    tuning half (conv-26, conv-41, conv-43): every (gold, non-gold) pair of a question's head with
//    one of them in the first 3·top, loss Σ log(1 + exp(−w·(f_gold − f_other))) / pairs + l2/2·|w|²,
//    full-batch gradient descent from w = 0 (deterministic). Categories 1–4 only.
// 3. Prints leave-one-conversation-out figures inside the tuning half (--cv), or the fitted weights
//    and R@1/R@5/R@10/cat1 R@10/S@3 of both halves for the reordered head.
//
// Usage: node scripts/fit-rerank.mjs [--depth 100] [--l2 0.001] [--iters 3000] [--top 10] [--cv] [--refresh] [file]
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const argv = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 ? Number(argv.splice(i, 2)[1]) : fallback
}
const flag = (name) => {
  const i = argv.indexOf(`--${name}`)
  if (i < 0) return false
  argv.splice(i, 1)
  return true
}
const depth = opt('depth', 100)
const l2 = opt('l2', 0.001)
const iters = opt('iters', 3000)
const top = opt('top', 10)
const rate = opt('rate', 3)
const cv = flag('cv')
const refresh = flag('refresh')
const file = argv[0] ?? path.resolve(root, '../shared/datasets/locomo/locomo-dev.json')
const TUNE = ['conv-26', 'conv-41', 'conv-43']
const HELD = ['conv-30', 'conv-42', 'conv-44']

const { DEFAULT_RECALL_CONFIG } = await import(path.join(root, 'dist/engine/recall-pipeline.js'))
const { RERANK_FEATURES } = await import(path.join(root, 'dist/retrieval/rerank.js'))
const { runLocomoBench, normalizeEvidence } = await import(path.join(root, 'dist/bench/locomo.js'))

const cache = `/tmp/mnemo-rerank-features-${depth}.json`
if (refresh || !existsSync(cache)) {
  const data = JSON.parse(readFileSync(file, 'utf8'))
  const out = []
  let pending = []
  const saved = DEFAULT_RECALL_CONFIG.rerank
  DEFAULT_RECALL_CONFIG.rerank = {
    depth,
    weights: { fused: 1 },
    trace: (head, query) => {
      const i = pending.findIndex((p) => p.question === query)
      if (i < 0) return
      const [p] = pending.splice(i, 1)
      out.push({ conv: p.conv, cat: p.cat, gold: p.gold, rows: head.map((h) => ({ ref: h.doc.sourceRef ?? '', f: h.features })) })
    },
  }
  for (const conv of [...TUNE, ...HELD]) {
    const sample = data.find((s) => s.sample_id === conv)
    const valid = new Set()
    for (const [key, turns] of Object.entries(sample.conversation))
      if (/^session_\d+$/.test(key)) for (const t of turns) valid.add(t.dia_id)
    pending = sample.qa
      .map((q) => ({ conv, cat: Number(q.category), question: q.question, gold: normalizeEvidence(q.evidence, valid) }))
      .filter((p) => p.gold.length > 0 && typeof p.question === 'string')
    await runLocomoBench(file, { conversations: [conv] })
  }
  writeFileSync(cache, JSON.stringify({ features: RERANK_FEATURES, questions: out }))
  DEFAULT_RECALL_CONFIG.rerank = saved
}

const dumped = JSON.parse(readFileSync(cache, 'utf8'))
if (dumped.features.join() !== RERANK_FEATURES.join()) throw new Error(`${cache} has other features; run with --refresh`)
const questions = dumped.questions
  .filter((q) => q.cat >= 1 && q.cat <= 4)
  .map((q) => {
    const gold = new Set(q.gold)
    return {
      ...q,
      rel: q.rows.map((r) => gold.has(r.ref)),
      F: q.rows.map((r) => r.f),
      sess: q.rows.map((r) => r.ref.split(':')[0]),
      goldSessions: new Set(q.gold.map((g) => g.split(':')[0])),
    }
  })

function fitWeights(train) {
  const pairs = []
  for (const q of train) {
    q.rel.forEach((gi, i) => {
      if (!gi) return
      q.rel.forEach((gk, k) => {
        if (!gk && Math.min(i, k) < 3 * top) pairs.push(q.F[i].map((x, j) => x - q.F[k][j]))
      })
    })
  }
  const w = RERANK_FEATURES.map(() => 0)
  for (let it = 0; it < iters; it++) {
    const grad = w.map((x) => l2 * x)
    for (const d of pairs) {
      let s = 0
      for (let j = 0; j < w.length; j++) s += w[j] * d[j]
      const p = 1 / (1 + Math.exp(s))
      for (let j = 0; j < w.length; j++) grad[j] -= (p * d[j]) / pairs.length
    }
    for (let j = 0; j < w.length; j++) w[j] -= rate * grad[j]
  }
  return w
}

function score(qs, w) {
  const m = { n: qs.length, r1: 0, r5: 0, r10: 0, s3: 0, cat1: 0, n1: 0 }
  for (const q of qs) {
    const s = q.F.map((f) => f.reduce((a, x, j) => a + x * w[j], 0))
    const order = s.map((_, i) => i).sort((a, b) => s[b] - s[a] || a - b)
    let h1 = 0,
      h5 = 0,
      h10 = 0
    order.slice(0, 10).forEach((i, p) => {
      if (!q.rel[i]) return
      h10++
      if (p < 5) h5++
      if (p < 1) h1++
    })
    const sessions = []
    for (const i of order) if (sessions.length < 3 && !sessions.includes(q.sess[i])) sessions.push(q.sess[i])
    const n = q.gold.length
    m.r1 += h1 / n
    m.r5 += h5 / n
    m.r10 += h10 / n
    m.s3 += sessions.some((x) => q.goldSessions.has(x)) ? 1 : 0
    if (q.cat === 1) {
      m.cat1 += h10 / n
      m.n1++
    }
  }
  return m
}
const line = (m) =>
  `R@1 ${(m.r1 / m.n).toFixed(3)} R@5 ${(m.r5 / m.n).toFixed(3)} R@10 ${(m.r10 / m.n).toFixed(3)} cat1@10 ${(m.cat1 / m.n1).toFixed(3)} S@3 ${(m.s3 / m.n).toFixed(3)}`
const tune = questions.filter((q) => TUNE.includes(q.conv))
const held = questions.filter((q) => HELD.includes(q.conv))
const identity = RERANK_FEATURES.map((f) => (f === 'fused' ? 1 : 0))

if (cv) {
  const sum = { n: 0, r1: 0, r5: 0, r10: 0, s3: 0, cat1: 0, n1: 0 }
  const base = { ...sum }
  for (const conv of TUNE) {
    const w = fitWeights(tune.filter((q) => q.conv !== conv))
    const out = tune.filter((q) => q.conv === conv)
    for (const [acc, m] of [
      [sum, score(out, w)],
      [base, score(out, identity)],
    ])
      for (const k of Object.keys(acc)) acc[k] += m[k]
  }
  console.log(`leave one tuning conversation out: fused order ${line(base)}`)
  console.log(`                                   re-ranked   ${line(sum)}`)
} else {
  const w = fitWeights(tune)
  console.log(`tune fused order ${line(score(tune, identity))}\n     re-ranked   ${line(score(tune, w))}`)
  console.log(`held fused order ${line(score(held, identity))}\n     re-ranked   ${line(score(held, w))}`)
  console.log(JSON.stringify(Object.fromEntries(RERANK_FEATURES.map((f, j) => [f, Math.round(w[j] * 1000) / 1000]))))
}
