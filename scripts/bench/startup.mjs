// Start-up cost of the processes a user and an agent start: the CLI (`--version`, `--help`, `status`, `recall`,
// `context`) and the hook (`PostToolUse`, `UserPromptSubmit`, `SessionStart`), each as CPU time (user + sys) of one
// process from exec to exit (both as `mnemo` runs them, package.json's bin, which `mnemo connect` writes into agents'
// hook commands), beside bare `node -e 0` measured in the same run, interleaved run by run so load on a
// shared machine hits both alike. The figure is the median over the runs; ratio = figure / floor. The PostToolUse
// hook is also shown beside the least any hook writing to SQLite costs (node, the addon, the store opened, one row
// inserted: `sqliteWriteFloor`), measured in the same runs.
//
// A group of the one benchmark (`npm run bench`, scripts/bench/run.mjs), which calls `figures(ctx)` with its cached
// 1k/10k/100k stores. Standalone, on stores of your own (a data directory each):
//
//   node scripts/bench/startup.mjs [--runs 7] [--cli dist/adapters/cli/main.js] [--store 1k=<MNEMO_HOME>] …
//
// CPU time is read with bash's `times` builtin (the children's user and sys time, from the kernel's rusage, in ms):
// it counts every thread of the process, start-up and exit included, as an agent pays for them.
import { spawnSync } from 'node:child_process'
import { appendFileSync, constants, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/**
 * The CPU seconds (user + sys) of one run of `argv` with `stdinFile` on stdin, output discarded.
 *
 * @throws {Error} when bash or its `times` output is missing (this benchmark needs bash).
 */
export function cpuSeconds(argv, stdinFile, env) {
  // `times` prints the shell's own times, then its children's: `0m0.045s 0m0.012s`.
  const r = spawnSync('bash', ['-c', '"$@" < "$MNEMO_BENCH_STDIN" > /dev/null 2>&1; times', 'bench', ...argv], {
    env: { ...env, MNEMO_BENCH_STDIN: stdinFile },
    encoding: 'utf8',
  })
  const line = (r.stdout ?? '').trim().split('\n').at(-1) ?? ''
  const m = /^(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s$/.exec(line)
  if (!m)
    throw new Error(`startup bench: cannot read CPU time from bash \`times\` (${JSON.stringify(line)}; ${r.error?.message ?? r.stderr})`)
  return Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4])
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/**
 * Runs `subject(i)` and bare node alternately `runs` times (after one unmeasured warm-up of each, so the file
 * cache is warm) and returns both medians, seconds.
 */
function measure(runs, subject, env) {
  return measureEach(runs, [subject], env)[0]
}

/**
 * `measure` for several subjects at once, interleaved run by run with bare node (so the load of a shared machine hits
 * them alike): one `{ value, floor }` per subject, all with the same floor.
 */
export function measureEach(runs, subjects, env) {
  const floorArgv = [process.execPath, '-e', '0']
  const run = (s) => cpuSeconds(s.argv, s.stdin ?? '/dev/null', { ...env, ...(s.env ?? {}) })
  for (const subject of subjects) run(subject(-1))
  cpuSeconds(floorArgv, '/dev/null', env)
  const values = subjects.map(() => [])
  const floors = []
  for (let i = 0; i < runs; i++) {
    floors.push(cpuSeconds(floorArgv, '/dev/null', env))
    for (const [k, subject] of subjects.entries()) values[k].push(run(subject(i)))
  }
  return values.map((v) => ({ value: median(v), floor: median(floors) }))
}

const row = (figure, size, m) => ({
  figure,
  size,
  value: round(m.value),
  unit: 's',
  floor: round(m.floor),
  ratio: Math.round((m.value / m.floor) * 100) / 100,
})
const round = (v) => Math.round(v * 1000) / 1000

/** Tool events spooled before the timed Stop hook that stores them (a turn of a coding agent: a few reads, edits, commands). */
const DEFERRED_PER_TURN = 10

/** The MNEMO_HOME of the runner's cached store of `size` (`{ label, observations }`). */
async function storeHome(ctx, size) {
  const s = await ctx.store(size)
  return typeof s === 'string' ? s : s.home
}

/** The root of the project with the most observations in the store at `home` (the hooks' and `context`'s project). */
export function busiestProject(home) {
  const Database = createRequire(path.join(ROOT, 'package.json'))('better-sqlite3')
  const db = new Database(path.join(home, 'mnemo.db'), { readonly: true, fileMustExist: true })
  try {
    return db
      .prepare(
        'SELECT p.root AS root FROM projects p JOIN observations o ON o.project_id = p.id GROUP BY p.id ORDER BY count(*) DESC LIMIT 1',
      )
      .get()?.root
  } finally {
    db.close()
  }
}

/**
 * Hook payloads as Claude Code writes them for `cwd`, a fresh session and tool call per run `i` (so each run stores
 * a new event rather than meeting a duplicate): a Read of a 3 KB source file, a prompt, a session start.
 */
export function hookPayload(event, cwd, i) {
  const session = `00000000-0000-4000-8000-${String(1e11 + i + 1).padStart(12, '0')}`
  const base = {
    session_id: session,
    transcript_path: `/tmp/bench/${session}.jsonl`,
    cwd,
    permission_mode: 'default',
    hook_event_name: event,
  }
  if (event === 'SessionStart') return { ...base, source: 'startup', model: 'claude-sonnet-4-5-20250929' }
  if (event === 'Stop') return { ...base, stop_hook_active: false }
  if (event === 'UserPromptSubmit')
    return {
      ...base,
      prompt: `Fix the refund bug in src/api/refund.ts (run ${i}): settleLedger returns a stale entry when the order is partial. Check how the coupon cache stores it.`,
    }
  const file = `${cwd}/src/ledger/settle-${i % 17}.ts`
  const content = Array.from(
    { length: 60 },
    (_, n) =>
      `${String(n + 1).padStart(6)}\texport function settle${n}(order: Order, ledger: Ledger): Entry { return ledger.entries.find((e) => e.orderId === order.id && e.run === ${i}) }`,
  ).join('\n')
  return {
    ...base,
    tool_name: 'Read',
    tool_input: { file_path: file },
    tool_response: { type: 'text', file: { filePath: file, content } },
    tool_use_id: `toolu_bench${String(i + 1).padStart(10, '0')}`,
  }
}

/**
 * The subject of the SQLite write floor (see `figures`): a node process that reads the hook payload on stdin, loads
 * better-sqlite3 from this repository, opens the store copy at `home` as the store does (WAL, synchronous=FULL) and
 * inserts the payload into a table of its own. The script is written into `tmp`.
 */
function sqliteWriteFloor(home, tmp) {
  const script = path.join(tmp, 'sqlite-write-floor.cjs')
  writeFileSync(
    script,
    `const Database = require(${JSON.stringify(createRequire(path.join(ROOT, 'package.json')).resolve('better-sqlite3'))})
const payload = require('node:fs').readFileSync(0, 'utf8')
const db = new Database(${JSON.stringify(path.join(home, 'mnemo.db'))})
db.pragma('journal_mode = WAL')
db.pragma('synchronous = FULL')
db.exec('CREATE TABLE IF NOT EXISTS bench_floor (id INTEGER PRIMARY KEY, payload TEXT)')
db.transaction(() => db.prepare('INSERT INTO bench_floor (payload) VALUES (?)').run(payload)).immediate()
db.close()
`,
  )
  const stdin = path.join(tmp, 'sqlite-write-floor.json')
  writeFileSync(stdin, JSON.stringify(hookPayload('PostToolUse', '/tmp/floor', 0)))
  return () => ({ argv: [process.execPath, script], stdin })
}

/** A private writable copy of the store at `home` (the hooks write; the runner's cached store stays as it was). */
export function copyStore(home, into) {
  mkdirSync(into, { recursive: true })
  for (const f of ['mnemo.db', 'mnemo.db-wal']) {
    if (existsSync(path.join(home, f))) copyFileSync(path.join(home, f), path.join(into, f), constants.COPYFILE_FICLONE)
  }
}

/**
 * The start-up figures.
 *
 * @param ctx - The runner's context (scripts/bench/run.mjs `makeContext`): `cli`, `sizes` (`[{ label, observations }]`),
 *   `store(size)` (`{ home, … }`, read-only: the hooks write to a copy), `log`; `runs` (default 7, or `--startup-runs n`
 *   on the runner's command line).
 * @returns Rows `{figure, size, value, unit: 's', floor, ratio}`: CPU seconds beside bare `node -e 0`.
 */
export async function figures(ctx) {
  const runsAt = ctx.args?.indexOf('--startup-runs') ?? -1
  const runs = ctx.runs ?? (runsAt >= 0 ? Number(ctx.args[runsAt + 1]) : 7)
  const log = ctx.log ?? (() => {})
  const cli = ctx.cli ?? path.join(ROOT, 'dist/adapters/cli/main.js')
  if (!existsSync(cli)) throw new Error(`startup bench: ${cli} is missing (run npm run build)`)
  // Every figure runs what `mnemo` runs and what `mnemo connect` writes into agents' hook commands: package.json's bin
  // (bin.cjs beside main.js; main.js in a build without it).
  const binName = path.basename(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).bin.mnemo)
  const bin = existsSync(path.join(path.dirname(cli), binName)) ? path.join(path.dirname(cli), binName) : cli
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'mnemo-bench-startup-'))
  const empty = path.join(tmp, 'empty-home')
  const env = { ...process.env, MNEMO_HOME: empty }
  for (const k of Object.keys(env)) if (k.startsWith('MNEMO_') && k !== 'MNEMO_HOME') delete env[k]
  // Node settings that cost every process alike, floor included, and that a user's machine rarely has: with
  // NODE_EXTRA_CA_CERTS set (this sandbox sets it) each node process parses a CA bundle at start, ~55 ms CPU of a bare
  // `node -e 0`'s ~85 ms, which would hide mnemo's own start-up cost in the ratio. Every figure and its floor run without them.
  for (const k of ['NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS']) {
    if (env[k]) log(`startup: ${k} unset for every run (floor included)`)
    delete env[k]
  }
  const node = process.execPath
  const rows = []
  try {
    for (const [name, args] of [
      ['--version', ['--version']],
      ['--help', ['--help']],
    ]) {
      rows.push(
        row(
          `CLI ${name} CPU`,
          '',
          measure(runs, () => ({ argv: [node, bin, ...args] }), env),
        ),
      )
      log(`startup: CLI ${name} done`)
    }
    for (const sized of ctx.sizes) {
      const size = sized.label
      const home = await storeHome(ctx, sized)
      const cwd = busiestProject(home)
      const readEnv = { ...env, MNEMO_HOME: home }
      for (const [name, args] of [
        ['status', ['status']],
        // The whole store (the runner's folder holds nothing captured, which recall would read as no project).
        ['recall', ['recall', 'retry backoff ledger settle', '--all-projects']],
        ['context', ['context', '--project', cwd]],
      ]) {
        rows.push(
          row(
            `CLI ${name} CPU`,
            size,
            measure(runs, () => ({ argv: [node, bin, ...args] }), readEnv),
          ),
        )
      }
      const copy = path.join(tmp, `home-${size}`)
      copyStore(home, copy)
      const hookEnv = { ...env, MNEMO_HOME: copy }
      let n = 0
      const hook = (event, extraEnv) => () => {
        const file = path.join(tmp, `${event}.json`)
        writeFileSync(file, JSON.stringify(hookPayload(event, cwd, n++)))
        return { argv: [node, bin, 'hook', event], stdin: file, ...(extraEnv ? { env: extraEnv } : {}) }
      }
      const [postToolUse, writeFloor] = measureEach(runs, [hook('PostToolUse'), sqliteWriteFloor(copy, tmp)], hookEnv)
      // Deferred capture: the hook spools the event; a later process stores it (below: what that costs it).
      rows.push(row('hook PostToolUse CPU (deferred: spooled)', size, postToolUse))
      // The least a hook that writes to SQLite can cost: node, the better-sqlite3 addon, the store opened, the payload
      // inserted as one row of a table of its own in one transaction (WAL, synchronous=FULL, as the store writes).
      rows.push(row('SQLite write floor (node + open + one insert) CPU', size, writeFloor))
      rows.push(row('hook PostToolUse ÷ SQLite write floor', size, { value: postToolUse.value, floor: writeFloor.value }))
      // What the deferred events cost the process that stores them: a Stop hook (the end of the agent's turn) after
      // DEFERRED_PER_TURN spooled tool events, beside a Stop hook with an empty spool. The spooling runs are not timed.
      spawnSync(node, [bin, 'status'], { env: hookEnv, stdio: 'ignore' })
      const stop = (spooled) => () => {
        for (let k = 0; k < spooled; k++) {
          const spec = hook('PostToolUse')()
          spawnSync(node, [bin, 'hook', 'PostToolUse'], {
            env: hookEnv,
            input: readFileSync(spec.stdin),
            stdio: ['pipe', 'ignore', 'ignore'],
          })
        }
        return hook('Stop')()
      }
      const [stopAfter, stopAlone] = measureEach(runs, [stop(DEFERRED_PER_TURN), stop(0)], hookEnv)
      rows.push(row(`hook Stop CPU, after ${DEFERRED_PER_TURN} deferred tool events`, size, stopAfter))
      rows.push(row('hook Stop CPU, nothing deferred', size, stopAlone))
      const perEvent = { value: (stopAfter.value - stopAlone.value) / DEFERRED_PER_TURN, floor: stopAlone.floor }
      rows.push(row('storing one deferred event in that Stop hook CPU', size, perEvent))
      rows.push(
        row('tool event end to end CPU (deferred hook + its share of the drain)', size, {
          value: postToolUse.value + perEvent.value,
          floor: postToolUse.floor,
        }),
      )
      // The prompt hook beside the plain capture hook (per-prompt recall off), interleaved: issue 15 wants ≤ 1.3×.
      const [prompt, plain] = measureEach(
        runs,
        [hook('UserPromptSubmit'), hook('UserPromptSubmit', { MNEMO_PROMPT_RECALL: 'off' })],
        hookEnv,
      )
      rows.push(row('hook UserPromptSubmit CPU', size, prompt))
      rows.push(row('hook UserPromptSubmit, recall off CPU', size, plain))
      rows.push(row('hook UserPromptSubmit ÷ recall off', size, { value: prompt.value, floor: plain.value }))
      rows.push(row('hook SessionStart CPU', size, measure(runs, hook('SessionStart'), hookEnv)))
      rmSync(copy, { recursive: true, force: true })
      log(`startup: ${size} done`)
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
  return rows
}

// Standalone: print the rows as a table.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2)
  const stores = {}
  let runs
  let cli
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--store') {
      const [size, home] = args[++i].split('=')
      stores[size] = path.resolve(home)
    } else if (args[i] === '--runs') runs = Number(args[++i])
    else if (args[i] === '--cli') cli = path.resolve(args[++i])
  }
  const sizes = Object.keys(stores).map((label) => ({ label }))
  const rows = await figures({
    sizes,
    store: (size) => stores[size.label],
    ...(runs ? { runs } : {}),
    ...(cli ? { cli } : {}),
    log: (l) => process.stderr.write(`${l}\n`),
  })
  // Each standalone run joins the benchmark's history (scripts/bench/run.mjs appends its runs to the same file).
  mkdirSync(path.join(ROOT, 'bench-results'), { recursive: true })
  appendFileSync(
    path.join(ROOT, 'bench-results/history.jsonl'),
    `${JSON.stringify({ at: new Date().toISOString(), bench: 'startup', cores: os.cpus().length, node: process.version, runs: runs ?? 7, sizes: Object.keys(stores), rows })}\n`,
  )
  console.log(`cores ${os.cpus().length} · node ${process.version}`)
  console.log(['figure'.padEnd(38), 'size'.padEnd(5), 'value'.padStart(7), 'floor'.padStart(7), 'ratio'.padStart(6)].join(' '))
  for (const r of rows)
    console.log(
      [
        r.figure.padEnd(38),
        (r.size || '-').padEnd(5),
        `${r.value.toFixed(3)}`.padStart(7),
        `${r.floor.toFixed(3)}`.padStart(7),
        `${r.ratio.toFixed(2)}×`.padStart(6),
      ].join(' '),
    )
}
