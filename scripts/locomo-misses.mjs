#!/usr/bin/env node
// Prints, for LoCoMo questions, each evidence turn that recall ranked below --k (default 10) next to
// the question and the top 3 turns it returned instead: what to read before changing retrieval.
// Reads the dataset at run time (nothing of it is stored here). Built code (dist/) is used.
// Usage: node scripts/locomo-misses.mjs [file] [--conversations conv-26,conv-41] [--category 1] [--k 10]
import { readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args.splice(i, 2)[1] : fallback
}
const only = new Set(opt('conversations', 'conv-26,conv-41,conv-43').split(','))
const category = opt('category', undefined)
const k = Number(opt('k', '10'))
const file = args[0] ?? path.resolve(root, '../shared/datasets/locomo/locomo-dev.json')
const { parseLocomo } = await import(path.join(root, 'dist/capture/locomo.js'))
const { normalizeEvidence } = await import(path.join(root, 'dist/bench/locomo.js'))
const { openMnemo } = await import(path.join(root, 'dist/runtime/open-mnemo.js'))

for (const sample of JSON.parse(readFileSync(file, 'utf8'))) {
  if (!only.has(sample.sample_id)) continue
  const text = new Map()
  for (const [key, turns] of Object.entries(sample.conversation)) {
    if (!/^session_\d+$/.test(key)) continue
    for (const t of turns) text.set(t.dia_id, `${t.speaker}: ${t.text}${t.blip_caption ? ` [image: ${t.blip_caption}]` : ''}`)
  }
  const mnemo = openMnemo({ dbPath: ':memory:', home: path.join(os.tmpdir(), 'mnemo-misses'), env: {}, timeZone: 'UTC' })
  const parsed = parseLocomo([sample])
  await mnemo.engine.append(parsed.events)
  const projectIds = (await mnemo.engine.listProjects()).map((p) => p.id)
  for (const qa of sample.qa) {
    if (category !== undefined && String(qa.category) !== category) continue
    if (qa.category === 5) continue
    const gold = normalizeEvidence(qa.evidence, new Set(text.keys()))
    if (gold.length === 0) continue
    let hits = []
    try {
      hits = await mnemo.engine.recall(qa.question, { projectIds, limit: 100 })
    } catch {}
    const ranking = [...new Set(hits.map((h) => h.sourceRef).filter(Boolean))]
    const missed = gold.filter((id) => {
      const r = ranking.indexOf(id)
      return r < 0 || r >= k
    })
    if (missed.length === 0) continue
    console.log(`\n[${sample.sample_id} cat${qa.category}] ${qa.question}  → ${qa.answer ?? ''}`)
    for (const id of gold) {
      const r = ranking.indexOf(id)
      console.log(`  ${r >= 0 && r < k ? 'HIT ' : 'MISS'} ${id} rank ${r < 0 ? '-' : r + 1}: ${text.get(id)}`)
    }
    for (const id of ranking.slice(0, 3)) console.log(`    top ${id}: ${(text.get(id) ?? '').slice(0, 140)}`)
  }
  await mnemo.close()
}
