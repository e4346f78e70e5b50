// Import and rebuild throughput, each beside the parse + insert floor (floor.mjs) over the same input in the same run.
// - import: the 10k store's transcripts (or the smallest size asked for when 10k is not) into an empty data directory
//   with the built CLI (`mnemo import <folder>`), events/s; floor: the same lines through parseInsertFloor.
// - rebuild: `mnemo rebuild` on a copy of the largest store asked for; floor: its event payloads (decoded as the store
//   does when stored compressed) through parseInsertFloor.
// Ratios are the time taken over the floor's time (> 1 = slower than the floor).
import { spawnSync } from 'node:child_process'
import { copyFileSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { parseInsertFloor } from './floor.mjs'

function cli(ctx, home, ...args) {
  const t0 = performance.now()
  const run = spawnSync(process.execPath, [ctx.cli, ...args], {
    env: { PATH: process.env.PATH, MNEMO_HOME: home },
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  })
  if (run.status !== 0) throw new Error(`mnemo ${args.join(' ')} failed (${run.status}): ${run.stderr}`)
  return performance.now() - t0
}

function transcriptFiles(dir) {
  const out = []
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const full = path.join(dir, e.name)
    if (e.isDirectory()) out.push(...transcriptFiles(full))
    else if (e.name.endsWith('.jsonl')) out.push(full)
  }
  return out
}

export async function figures(ctx) {
  const rows = []
  const importSize = ctx.sizes.find((s) => s.label === '10k') ?? ctx.sizes[0]
  const src = await ctx.store(importSize)
  const files = transcriptFiles(path.join(src.transcripts, 'sessions'))
  const floor = parseInsertFloor(path.join(ctx.tmp('import-floor'), 'floor.db'), function* () {
    for (const f of files)
      yield readFileSync(f, 'utf8')
        .split('\n')
        .filter((l) => l.length > 0)
  })
  const importMs = cli(ctx, ctx.tmp('import-home'), 'import', path.join(src.transcripts, 'sessions'), '--json')
  const eventsPerSec = (src.events / importMs) * 1000
  rows.push({
    ...ctx.row('import', importSize.label, eventsPerSec, 'events/s'),
    floor: (floor.lines / floor.ms) * 1000,
    ratio: importMs / floor.ms,
  })

  const largest = ctx.sizes.at(-1)
  const big = await ctx.store(largest)
  const home = ctx.tmp('rebuild-home')
  copyFileSync(big.db, path.join(home, 'mnemo.db'))
  const db = new Database(path.join(home, 'mnemo.db'), { readonly: true })
  const payloads = db.prepare('SELECT payload FROM events ORDER BY seq').pluck()
  const { payloadText } = await ctx.dist('storage/sqlite/sqlite-payload.js')
  const rebuildFloor = parseInsertFloor(path.join(ctx.tmp('rebuild-floor'), 'floor.db'), function* () {
    let batch = []
    for (const p of payloads.iterate()) {
      // A payload the log stores compressed (a BLOB) is inflated first, as rebuild does.
      batch.push(payloadText(p))
      if (batch.length === 500) {
        yield batch
        batch = []
      }
    }
    if (batch.length > 0) yield batch
  })
  db.close()
  const rebuildMs = cli(ctx, home, 'rebuild', '--json')
  rows.push(ctx.row('rebuild', largest.label, rebuildMs / 1000, 's', rebuildFloor.ms / 1000))
  return rows
}
