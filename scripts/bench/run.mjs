#!/usr/bin/env node
// The benchmark: `npm run bench` (a benchmark, not a test: it prints figures beside floors measured in the same run).
//
//   npm run build && node scripts/bench/run.mjs [--sizes 1k,10k,100k] [--only recall,recall-pg,storage,import,serve,startup,facts]
//     [--database postgres://…]   (recall-pg: the recall figures on PostgreSQL beside SQLite's)
//
// Data: generated deterministically inside the repository (scripts/bench/generate.mjs), imported into stores of
// about 1k, 10k and 100k observations that are built once and cached under .bench-cache/ (scripts/bench/stores.mjs).
// Each group of figures is a module of this folder exporting
//
//   export async function figures(ctx) → Row[]     Row = { figure, size, value, unit, floor, ratio }
//
// `figure` names what is measured, `size` the store (a label such as '100k', or '' when none applies), `value` the
// figure in `unit`, `floor` the same measure of the least work that could do the job, taken in the same run (null
// when there is none), and `ratio` = value / floor (null without a floor). `ctx` is described at `makeContext`.
// The table goes to stdout, with the core count; each run is appended to bench-results/history.jsonl.
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { cachedStore } from './stores.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
/** The groups, in the order they run and print. A group whose module is absent is skipped. */
export const GROUPS = ['startup', 'recall', 'recall-pg', 'storage', 'import', 'serve', 'facts']
const SIZES = { '1k': 1_000, '10k': 10_000, '100k': 100_000 }

/** The p-th quantile (0–1) of `values`, linearly interpolated; NaN for none. */
export function quantile(values, p) {
  const s = [...values].sort((a, b) => a - b)
  if (s.length === 0) return NaN
  const i = (s.length - 1) * p
  const lo = Math.floor(i)
  const hi = Math.ceil(i)
  return s[lo] + (s[hi] - s[lo]) * (i - lo)
}

/** A row of the table; `ratio` is computed from `value` and `floor`. */
export function row(figure, size, value, unit, floor = null) {
  return { figure, size, value, unit, floor, ratio: floor ? value / floor : null }
}

/**
 * What every group receives:
 * - `root`: the repository; `cli`: the built CLI's main.js; `dist(rel)`: import() of a built module (`'runtime/open-mnemo.js'`);
 * - `sizes`: the store sizes asked for, `[{ label: '10k', observations: 10000 }, …]`;
 * - `store(size)`: the cached store of that size (built on first use): `{ home, db, transcripts, sessions, observations,
 *   events, inputBytes, queries }`; treat it as read-only (copy it before writing);
 * - `tmp(name)`: a fresh folder removed when the run ends;
 * - `log(message)`: progress on stderr; `quantile`, `row`; `cores`; `args` (the command line).
 */
export function makeContext(sizes, args) {
  const tmpRoot = mkdtempSync(path.join(os.tmpdir(), 'mnemo-bench-'))
  const stores = new Map()
  return {
    root: ROOT,
    cli: path.join(ROOT, 'dist/adapters/cli/main.js'),
    dist: (rel) => import(pathToFileURL(path.join(ROOT, 'dist', rel)).href),
    sizes,
    args,
    cores: os.cpus().length,
    log: (message) => process.stderr.write(`bench: ${message}\n`),
    quantile,
    row,
    store(size) {
      if (!stores.has(size.label))
        stores.set(
          size.label,
          cachedStore(ROOT, size.observations, (m) => process.stderr.write(`bench: ${m}\n`)),
        )
      return stores.get(size.label)
    },
    tmp(name) {
      const dir = path.join(tmpRoot, name)
      rmSync(dir, { recursive: true, force: true })
      mkdirSync(dir, { recursive: true })
      return dir
    },
    cleanup: () => rmSync(tmpRoot, { recursive: true, force: true }),
  }
}

const fmt = (v) =>
  v === null || v === undefined
    ? ''
    : typeof v !== 'number'
      ? String(v)
      : Math.abs(v) >= 100
        ? v.toFixed(0)
        : Math.abs(v) >= 10
          ? v.toFixed(1)
          : v.toFixed(2)

export function printTable(rows, cores) {
  const lines = [
    ['figure', 'size', 'value', 'unit', 'floor', 'ratio'],
    ...rows.map((r) => [r.figure, r.size, fmt(r.value), r.unit, fmt(r.floor), r.ratio === null ? '' : `${fmt(r.ratio)}×`]),
  ]
  const widths = lines[0].map((_, i) => Math.max(...lines.map((l) => l[i].length)))
  const out = lines.map((l) => `| ${l.map((c, i) => (i >= 2 && i !== 3 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join(' | ')} |`)
  out.splice(1, 0, `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`)
  console.log(`mnemo benchmark · ${cores} cores · node ${process.version}`)
  console.log(out.join('\n'))
}

async function main() {
  const args = process.argv.slice(2)
  const opt = (name) => {
    const i = args.indexOf(`--${name}`)
    return i >= 0 ? args[i + 1] : undefined
  }
  if (!existsSync(path.join(ROOT, 'dist/adapters/cli/main.js'))) {
    console.error('dist/ is missing: run `npm run build` first')
    process.exit(1)
  }
  const sizeLabels = (opt('sizes') ?? '1k,10k,100k').split(',')
  for (const l of sizeLabels) if (!SIZES[l]) throw new Error(`--sizes: unknown size ${l} (one of ${Object.keys(SIZES).join(', ')})`)
  const only = opt('only')?.split(',')
  for (const g of only ?? []) if (!GROUPS.includes(g)) throw new Error(`--only: unknown group ${g} (one of ${GROUPS.join(', ')})`)
  const ctx = makeContext(
    sizeLabels.map((label) => ({ label, observations: SIZES[label] })),
    args,
  )
  const rows = []
  const failed = []
  try {
    for (const group of GROUPS) {
      if (only && !only.includes(group)) continue
      const file = path.join(path.dirname(fileURLToPath(import.meta.url)), `${group}.mjs`)
      if (!existsSync(file)) continue
      ctx.log(`${group}…`)
      try {
        const { figures } = await import(pathToFileURL(file).href)
        rows.push(...(await figures(ctx)))
      } catch (error) {
        // One group failing does not lose the others' figures: it is named, and the run exits 1.
        failed.push(group)
        ctx.log(`${group} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
      }
    }
  } finally {
    ctx.cleanup()
  }
  printTable(rows, ctx.cores)
  const results = path.join(ROOT, 'bench-results')
  mkdirSync(results, { recursive: true })
  appendFileSync(
    path.join(results, 'history.jsonl'),
    `${JSON.stringify({ at: new Date().toISOString(), bench: 'bench', cores: ctx.cores, node: process.version, sizes: sizeLabels, rows, ...(failed.length > 0 ? { failed } : {}) })}\n`,
  )
  if (failed.length > 0) {
    console.error(`bench: failed groups: ${failed.join(', ')}`)
    process.exitCode = 1
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main()
