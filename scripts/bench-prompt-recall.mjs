#!/usr/bin/env node
// Per-prompt recall benchmark (issue 15): replays prompts through the real UserPromptSubmit hook path and prints
// hit rate, false-injection rate, tokens injected per prompt, the gate's trade-off curve, and the prompt hook's time
// beside the plain capture hook's (MNEMO_PROMPT_RECALL=off) in the same run.
//
//   npm run build && node scripts/bench-prompt-recall.mjs [--locomo FILE] [--coding-sessions 60] [--timing 40] [--questions N]
//
// LoCoMo (default ../shared/datasets/locomo/locomo-dev.json): each conversation is ingested as its own store (as
// `mnemo bench locomo` does: one observation per turn); each question is sent as a prompt, through runHook, to a fresh
// copy of its own conversation's store (hit: the injected block holds at least one gold evidence turn) and to a copy
// of the next conversation's store (false injection: anything injected at all).
// Coding sessions: transcripts from ../shared/tools/perf/gen-claude-transcripts.mjs imported into one store; for each
// session after a project's first, a prompt naming the identifier and file its first prompt was about is asked in a
// new session (hit: an item of an earlier session of that project that names the identifier), and the same prompt in
// another project (false injection).
// Curve: the same questions through MnemoEngine.promptContext with the gate's share threshold varied.
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { execFileSync, spawnSync } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, '..')
const dist = (p) => path.join(repo, 'dist', p)
if (!existsSync(dist('adapters/cli/main.js'))) throw new Error('run `npm run build` first')
const { parseLocomo } = await import(dist('capture/locomo.js'))
const { openMnemo } = await import(dist('runtime/open-mnemo.js'))
const { runHook } = await import(dist('adapters/hooks/run-hook.js'))
const { estimateTokens } = await import(dist('core/text.js'))
const { normalizeEvidence } = await import(dist('bench/locomo.js'))
const { DEFAULT_GATE } = await import(dist('context/relevance-gate.js'))
const { assemblePromptBlock } = await import(dist('context/prompt-block.js'))

const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : fallback
}
// ../shared beside the repository (a clone in /work/main) or two levels up (a worktree in /work/wt/<name>).
const shared = [path.join(repo, '../shared'), path.join(repo, '../../shared')].find((d) => existsSync(d)) ?? path.join(repo, '../shared')
const locomoFile = path.resolve(opt('locomo', path.join(shared, 'datasets/locomo/locomo-dev.json')))
const codingSessions = Number(opt('coding-sessions', '60'))
const timingRuns = Number(opt('timing', '40'))
const maxQuestions = Number(opt('questions', 'Infinity'))
const budget = 300
const work = path.join(os.tmpdir(), 'moment', 'bench-prompt')
rmSync(work, { recursive: true, force: true })
mkdirSync(work, { recursive: true })

const pct = (values, p) => {
  if (values.length === 0) return 0
  const s = [...values].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]
}
const mean = (values) => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length)
const f2 = (x) => x.toFixed(2)
const f3 = (x) => x.toFixed(3)

/** Runs the UserPromptSubmit hook in-process on a store and returns the injected block ('' for none). */
async function promptHook(home, payload, env = {}) {
  const stdin = new PassThrough()
  let out = ''
  const run = runHook('UserPromptSubmit', {
    stdin,
    stdout: { write: (t) => (out += t) },
    stderr: { write: () => undefined },
    env: { HOME: home, MNEMO_HOME: home, MNEMO_TZ: 'UTC', ...env },
    cwd: payload.cwd,
    exit: () => undefined,
  })
  stdin.end(JSON.stringify({ hook_event_name: 'UserPromptSubmit', transcript_path: '/dev/null', ...payload }))
  await run
  if (out.trim() === '') return ''
  return JSON.parse(out).hookSpecificOutput?.additionalContext ?? ''
}

/** A fresh copy of a store's database for one run. */
function freshCopy(fromHome, name) {
  const home = path.join(work, 'run', name)
  rmSync(home, { recursive: true, force: true })
  mkdirSync(home, { recursive: true })
  copyFileSync(path.join(fromHome, 'mnemo.db'), path.join(home, 'mnemo.db'))
  return home
}

/** Turn signature used to find a turn in an injected block: its text's first 50 characters as the block escapes nothing in them. */
const signature = (text) => text.replace(/\s+/g, ' ').trim().slice(0, 50)

// ---------------------------------------------------------------- LoCoMo
const samples = JSON.parse(readFileSync(locomoFile, 'utf8'))
const convs = []
for (const [i, sample] of samples.entries()) {
  const home = path.join(work, `conv-${i}`)
  mkdirSync(home, { recursive: true })
  const parsed = parseLocomo([sample])
  // Filed under a folder path, as a hook's cwd names a project (the import names it `locomo:<id>`).
  const root = `/nonexistent-locomo/${String(parsed.events[0].project.name).replace(/[^\w.-]+/g, '-')}`
  const events = parsed.events.map((e) => ({ ...e, project: { root, name: path.basename(root) } }))
  const m = openMnemo({ env: { HOME: home, MNEMO_HOME: home, MNEMO_TZ: 'UTC' } })
  await m.engine.append(events)
  await m.close()
  const turnText = new Map()
  const validIds = new Set()
  for (const [key, session] of Object.entries(sample.conversation)) {
    if (!Array.isArray(session)) continue
    for (const turn of session) {
      validIds.add(turn.dia_id)
      turnText.set(turn.dia_id, signature(`${turn.speaker}: ${turn.text}`))
    }
    void key
  }
  const questions = []
  for (const qa of sample.qa) {
    const gold = normalizeEvidence(qa.evidence, validIds)
    if (gold.length === 0 || typeof qa.question !== 'string') continue
    questions.push({ question: qa.question, gold, category: qa.category })
  }
  convs.push({ home, root, turnText, questions: questions.slice(0, maxQuestions) })
}

const locomo = { own: [], foreign: [] }
let qn = 0
for (const [ci, conv] of convs.entries()) {
  const other = convs[(ci + 1) % convs.length]
  for (const q of conv.questions) {
    qn++
    const ownHome = freshCopy(conv.home, 'own')
    const block = await promptHook(ownHome, { session_id: `q-${qn}`, cwd: conv.root, prompt: q.question })
    const hit = q.gold.some((id) => block.includes(conv.turnText.get(id)))
    locomo.own.push({ category: q.category, injected: block !== '', hit, tokens: block === '' ? 0 : estimateTokens(block) })
    const foreignHome = freshCopy(other.home, 'foreign')
    const fblock = await promptHook(foreignHome, { session_id: `f-${qn}`, cwd: other.root, prompt: q.question })
    locomo.foreign.push({ category: q.category, injected: fblock !== '', tokens: fblock === '' ? 0 : estimateTokens(fblock) })
  }
}

// ---------------------------------------------------------------- report
const rate = (rows, f) => (rows.length === 0 ? 0 : rows.filter(f).length / rows.length)
const tokensOf = (rows) => rows.filter((r) => r.injected).map((r) => r.tokens)
const header = 'data                      prompts  hit rate  injected  false inj.  tokens mean  p95   (mean, p95 over injected prompts)'
const row = (name, own, foreign) => {
  const t = tokensOf(own)
  return `${name.padEnd(26)}${String(own.length).padStart(7)}  ${f3(rate(own, (r) => r.hit)).padStart(8)}  ${f3(rate(own, (r) => r.injected)).padStart(8)}  ${f3(rate(foreign, (r) => r.injected)).padStart(10)}  ${f2(mean(t)).padStart(11)}  ${String(pct(t, 0.95)).padStart(4)}`
}
function printLocomo() {
  const lines = []
  lines.push(
    `per-prompt recall: budget ${budget} tokens, gate minShare ${DEFAULT_GATE.minShare}, minItemShare ${DEFAULT_GATE.minItemShare}, minTermIdf ${f2(DEFAULT_GATE.minTermIdf)}; ${os.cpus().length} cores`,
  )
  lines.push('')
  lines.push(header)
  lines.push(
    row(
      'LoCoMo dev, cat 1-4',
      locomo.own.filter((r) => r.category >= 1 && r.category <= 4),
      locomo.foreign.filter((r) => r.category >= 1 && r.category <= 4),
    ),
  )
  lines.push(row('LoCoMo dev, all (1-5)', locomo.own, locomo.foreign))
  for (const c of [1, 2, 3, 4, 5])
    lines.push(
      row(
        `  category ${c}`,
        locomo.own.filter((r) => r.category === c),
        locomo.foreign.filter((r) => r.category === c),
      ),
    )
  lines.push('')
  lines.push('gate trade-off (LoCoMo dev, all questions; minShare varied, minItemShare and minTermIdf fixed):')
  lines.push('minShare  hit rate  injected  false inj.')
  for (const c of curve)
    lines.push(
      `${f2(c.t).padStart(8)}  ${f3(c.ownHit / c.n).padStart(8)}  ${f3(c.own / c.n).padStart(8)}  ${f3(c.foreign / c.n).padStart(10)}`,
    )
  console.log(lines.join('\n'))
}

// The gate's curve: each question once through the engine (no capture), the verdicts kept; then for each share
// threshold the block the engine would build (the same assembly: assemblePromptBlock) from the candidates that pass.
const THRESHOLDS = [0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.8, 1]
const curve = THRESHOLDS.map((t) => ({ t, own: 0, ownHit: 0, foreign: 0, n: 0 }))
/** The block for threshold `t` from one promptContext result (its verdicts), as promptRecall assembles it. */
async function blockAt(engine, result, t) {
  const open = result.judged.some(
    (j) => j.skipped !== 'this-session' && j.skipped !== 'echo' && j.skipped !== 'flagged' && j.rare && j.share >= t,
  )
  if (!open) return ''
  const items = []
  for (const j of result.judged) {
    if (j.skipped !== undefined || j.share < DEFAULT_GATE.minItemShare) continue
    const shown = await engine.show(j.id)
    const item = shown.type === 'observation' ? shown.observation : shown.memory
    items.push({ id: j.id, label: `${item.kind} · ${new Date(item.ts ?? item.createdAt).toISOString().slice(0, 10)}`, text: item.text })
  }
  return assemblePromptBlock({ items, corrections: [], budgetTokens: budget }).text
}
for (const [ci, conv] of convs.entries()) {
  const other = convs[(ci + 1) % convs.length]
  const ownM = openMnemo({ env: { HOME: conv.home, MNEMO_HOME: freshCopy(conv.home, 'curve-own'), MNEMO_TZ: 'UTC' } })
  const foreignM = openMnemo({ env: { HOME: other.home, MNEMO_HOME: freshCopy(other.home, 'curve-foreign'), MNEMO_TZ: 'UTC' } })
  for (const [qi, q] of conv.questions.entries()) {
    const own = await ownM.engine.promptContext(
      { project: { root: conv.root, name: path.basename(conv.root) }, agent: 'claude-code', sessionKey: `c-${qi}` },
      q.question,
      budget,
    )
    const foreign = await foreignM.engine.promptContext(
      { project: { root: other.root, name: path.basename(other.root) }, agent: 'claude-code', sessionKey: `c-${qi}` },
      q.question,
      budget,
    )
    for (const c of curve) {
      const ownText = await blockAt(ownM.engine, own, c.t)
      c.n++
      if (ownText !== '') c.own++
      if (q.gold.some((id) => ownText.includes(conv.turnText.get(id)))) c.ownHit++
      if ((await blockAt(foreignM.engine, foreign, c.t)) !== '') c.foreign++
    }
  }
  await ownM.close()
  await foreignM.close()
}
printLocomo()

// ---------------------------------------------------------------- coding sessions
const gen = path.join(shared, 'tools/perf/gen-claude-transcripts.mjs')
const coding = { own: [], foreign: [] }
if (existsSync(gen) && codingSessions > 0) {
  const tdir = path.join(work, 'transcripts')
  execFileSync(process.execPath, [gen, 'transcripts', tdir, '--sessions', String(codingSessions), '--seed', '7'])
  const home = path.join(work, 'coding')
  mkdirSync(home, { recursive: true })
  const m = openMnemo({ env: { HOME: home, MNEMO_HOME: home, MNEMO_TZ: 'UTC' } })
  await m.engine.importPath(tdir)
  await m.close()
  // Each transcript: its project cwd and first prompt, in time order.
  const sessions = []
  for (const d of readdirSync(tdir)) {
    for (const f of readdirSync(path.join(tdir, d))) {
      const records = readFileSync(path.join(tdir, d, f), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
      const first = records.find((r) => r.type === 'user' && typeof r.message?.content === 'string')
      if (!first) continue
      sessions.push({ cwd: first.cwd, prompt: first.message.content, at: Date.parse(first.timestamp) })
    }
  }
  sessions.sort((a, b) => a.at - b.at)
  const roots = [...new Set(sessions.map((s) => s.cwd))]
  const reader = openMnemo({ env: { HOME: home, MNEMO_HOME: home, MNEMO_TZ: 'UTC' } })
  let n = 0
  for (const s of sessions) {
    // An identifier (camelCase or snake_case) and a file the prompt names: what a later session would ask about.
    const ident = s.prompt.match(/\b[a-z]+(?:[A-Z][a-z0-9]+)+\b|\b[a-z]+(?:_[a-z0-9]+)+\b/)?.[0]
    const file = s.prompt.match(/\b[\w./-]+\.(?:ts|tsx|py|go)\b/)?.[0]
    if (!ident || !file) continue
    const question = `What did we find out about ${ident} in ${file} last time?`
    // The answer is in an earlier session: one that named the identifier (the session the prompt came from, at least).
    const holds = (text) => text.includes(ident)
    n++
    const block = await promptHook(freshCopy(home, 'coding-own'), { session_id: `cq-${n}`, cwd: s.cwd, prompt: question })
    const items = block.split('\n').filter((l) => l.startsWith('- ['))
    coding.own.push({ injected: block !== '', hit: items.some(holds), tokens: block === '' ? 0 : estimateTokens(block) })
    const otherRoot = roots[(roots.indexOf(s.cwd) + 1) % roots.length]
    const fblock = await promptHook(freshCopy(home, 'coding-foreign'), { session_id: `cf-${n}`, cwd: otherRoot, prompt: question })
    coding.foreign.push({ injected: fblock !== '', hit: false, tokens: fblock === '' ? 0 : estimateTokens(fblock) })
  }
  await reader.close()
}

// ---------------------------------------------------------------- hook timing (real processes, alternating)
const cli = dist('adapters/cli/main.js')
const timing = { prompt: [], capture: [] }
// CPU time (user + sys) of each hook process, from bash's `times` (as scripts/bench/startup.mjs reads it): wall time on
// a shared machine measures the other processes too.
const cpu = { prompt: [], capture: [] }
const timedConv = convs[0]
for (let i = 0; i < timingRuns; i++) {
  const q = timedConv.questions[i % timedConv.questions.length]
  for (const mode of i % 2 === 0 ? ['prompt', 'capture'] : ['capture', 'prompt']) {
    const home = freshCopy(timedConv.home, `timing-${mode}`)
    const payload = JSON.stringify({
      hook_event_name: 'UserPromptSubmit',
      session_id: `t-${mode}-${i}`,
      cwd: timedConv.root,
      transcript_path: '/dev/null',
      prompt: q.question,
    })
    const stdinFile = path.join(work, `timing-${mode}.json`)
    writeFileSync(stdinFile, payload)
    const t0 = performance.now()
    const r = spawnSync(
      'bash',
      ['-c', '"$@" < "$MNEMO_BENCH_STDIN" > /dev/null; s=$?; times; exit $s', 'bench', process.execPath, cli, 'hook', 'UserPromptSubmit'],
      {
        encoding: 'utf8',
        env: {
          PATH: process.env.PATH,
          HOME: home,
          MNEMO_HOME: home,
          MNEMO_TZ: 'UTC',
          MNEMO_BENCH_STDIN: stdinFile,
          ...(mode === 'capture' ? { MNEMO_PROMPT_RECALL: 'off' } : {}),
        },
      },
    )
    timing[mode].push(performance.now() - t0)
    if (r.status !== 0) throw new Error(`hook exited ${r.status}: ${r.stderr}`)
    // `times` prints the shell's own times, then its children's: `0m0.045s 0m0.012s`.
    const m = /^(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s$/.exec(r.stdout.trim().split('\n').at(-1) ?? '')
    if (!m) throw new Error(`cannot read the hook's CPU time from bash \`times\` (${JSON.stringify(r.stdout)})`)
    cpu[mode].push((Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4])) * 1000)
  }
}

// ---------------------------------------------------------------- report (coding, timing)
const tail = ['']
if (coding.own.length > 0) tail.push(header, row(`coding (${codingSessions} sessions)`, coding.own, coding.foreign), '')
const pm = pct(timing.prompt, 0.5)
const cm = pct(timing.capture, 0.5)
tail.push(
  `hook process time, ${timingRuns} runs each, alternating (ms): UserPromptSubmit with recall p50 ${f2(pm)} p95 ${f2(pct(timing.prompt, 0.95))}; plain capture (MNEMO_PROMPT_RECALL=off) p50 ${f2(cm)} p95 ${f2(pct(timing.capture, 0.95))}; ratio p50 ${f2(pm / cm)}`,
  `hook process CPU (user + sys, ms), same runs: UserPromptSubmit with recall p50 ${f2(pct(cpu.prompt, 0.5))} p95 ${f2(pct(cpu.prompt, 0.95))}; plain capture p50 ${f2(pct(cpu.capture, 0.5))} p95 ${f2(pct(cpu.capture, 0.95))}; ratio p50 ${f2(pct(cpu.prompt, 0.5) / pct(cpu.capture, 0.5))}`,
)
console.log(tail.join('\n'))
rmSync(path.join(work, 'run'), { recursive: true, force: true })
