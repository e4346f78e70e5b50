#!/usr/bin/env node
// Per-prompt recall in team mode (issue 15): the same LoCoMo replay as bench-prompt-recall.mjs, but every hook sends
// to a real `mnemo serve` on loopback (MNEMO_SERVER_URL) and gets its block from POST /v1/injections. Prints hit rate,
// false-injection rate and tokens per prompt, how many hooks got no answer within the budget (REMOTE_BUDGET_MS), and
// the UserPromptSubmit hook process's time beside the plain capture hook's (MNEMO_PROMPT_RECALL=off) in the same run,
// both against the same server.
//
//   npm run build && node scripts/bench-team-prompt.mjs [--locomo FILE] [--questions N] [--timing 40] [--keep]
//
// Reads ../shared/datasets/locomo/locomo-dev.json by default (absent: say so and exit 0). Each conversation is one
// project of one server store (one observation per turn); each question is asked in a new session of its own
// conversation's project (hit: the block holds a gold evidence turn) and of the next conversation's (false injection:
// anything injected); what a question's hook captured is forgotten before the next one (as the local benchmark gives
// each question a fresh copy of the store). The hit-rate part runs the hook in-process (runHook) with 5 s budgets; the timing part
// spawns real `mnemo hook UserPromptSubmit` processes, alternating the two modes. --keep leaves the scratch folder
// (the client's logs/errors.jsonl says why a hook printed nothing).
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { spawn } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, '..')
const dist = (p) => path.join(repo, 'dist', p)
if (!existsSync(dist('adapters/cli/main.js'))) throw new Error('run `npm run build` first')
const { parseLocomo } = await import(dist('capture/locomo.js'))
const { runHook } = await import(dist('adapters/hooks/run-hook.js'))
const { startServer } = await import(dist('adapters/http/server.js'))
const { estimateTokens } = await import(dist('core/text.js'))
const { normalizeEvidence } = await import(dist('bench/locomo.js'))

const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : fallback
}
const shared = [path.join(repo, '../shared'), path.join(repo, '../../shared')].find((d) => existsSync(d)) ?? path.join(repo, '../shared')
const locomoFile = path.resolve(opt('locomo', path.join(shared, 'datasets/locomo/locomo-dev.json')))
if (!existsSync(locomoFile)) {
  console.log(`bench-team-prompt: ${locomoFile} is absent (../shared not here); nothing measured`)
  process.exit(0)
}
const maxQuestions = Number(opt('questions', 'Infinity'))
const timingRuns = Number(opt('timing', '40'))
const work = path.join(os.tmpdir(), 'mnemo-bench-team-prompt')
if (!args.includes('--keep')) rmSync(work, { recursive: true, force: true })
mkdirSync(work, { recursive: true })

const pct = (values, p) => {
  if (values.length === 0) return 0
  const s = [...values].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]
}
const mean = (values) => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length)
const f2 = (x) => x.toFixed(2)
const f3 = (x) => x.toFixed(3)
const signature = (text) => text.replace(/\s+/g, ' ').trim().slice(0, 50)

// ---------------------------------------------------------------- one server store, one project per conversation
const server = await startServer({
  home: path.join(work, 'server'),
  host: '127.0.0.1',
  port: 0,
  env: { MNEMO_TZ: 'UTC' },
  consolidateEveryMinutes: 0,
})
const samples = JSON.parse(readFileSync(locomoFile, 'utf8'))
const convs = []
for (const sample of samples) {
  const parsed = parseLocomo([sample])
  const root = `/nonexistent-locomo/${String(parsed.events[0].project.name).replace(/[^\w.-]+/g, '-')}`
  await server.engine.append(parsed.events.map((e) => ({ ...e, project: { root, name: path.basename(root) } })))
  const turnText = new Map()
  const validIds = new Set()
  for (const session of Object.values(sample.conversation)) {
    if (!Array.isArray(session)) continue
    for (const turn of session) {
      validIds.add(turn.dia_id)
      turnText.set(turn.dia_id, signature(`${turn.speaker}: ${turn.text}`))
    }
  }
  const questions = []
  for (const qa of sample.qa) {
    const gold = normalizeEvidence(qa.evidence, validIds)
    if (gold.length > 0 && typeof qa.question === 'string') questions.push({ question: qa.question, gold })
  }
  convs.push({ root, turnText, questions: questions.slice(0, maxQuestions) })
}

const client = path.join(work, 'client')
mkdirSync(client, { recursive: true })
const clientEnv = { HOME: client, MNEMO_HOME: client, MNEMO_TZ: 'UTC', MNEMO_SERVER_URL: server.url, MNEMO_SERVER_TOKEN: server.token }

/**
 * Runs the UserPromptSubmit hook in-process against the server and returns the injected block ('' for none). With
 * budgets of 5 s, so that what is measured is what the server injects, not how loaded this machine is (the timing
 * part below runs real processes with the default budgets and counts the runs that missed them).
 */
async function promptHook(payload) {
  const stdin = new PassThrough()
  let out = ''
  const run = runHook('UserPromptSubmit', {
    stdin,
    stdout: { write: (t) => (out += t) },
    stderr: { write: () => undefined },
    env: clientEnv,
    remoteBudgetMs: { capture: 5000, context: 5000, inject: 5000 },
    cwd: payload.cwd,
    exit: () => undefined,
  })
  stdin.end(JSON.stringify({ hook_event_name: 'UserPromptSubmit', transcript_path: '/dev/null', ...payload }))
  await run
  return out.trim() === '' ? '' : (JSON.parse(out).hookSpecificOutput?.additionalContext ?? '')
}

/**
 * Forgets what the hook just captured in `root`'s project (the question's prompt), so every question meets the store
 * as ingested, as each run of bench-prompt-recall.mjs meets a fresh copy: asked questions never answer later ones.
 */
async function forgetAsked(root, sessionKey) {
  const projectIds = (await server.engine.resolveProjects(root)).map((p) => p.id)
  for (const s of await server.engine.sessions({ projectIds, limit: 5 })) {
    if (s.sessionKey !== sessionKey) continue
    const shown = await server.engine.show(s.id)
    for (const o of shown.detail.observations) await server.engine.forget(o.id, 'bench')
  }
}

const own = []
const foreign = []
let n = 0
for (const [ci, conv] of convs.entries()) {
  const other = convs[(ci + 1) % convs.length]
  for (const q of conv.questions) {
    n++
    const block = await promptHook({ session_id: `q-${n}`, cwd: conv.root, prompt: q.question })
    await forgetAsked(conv.root, `q-${n}`)
    own.push({
      injected: block !== '',
      hit: q.gold.some((id) => block.includes(conv.turnText.get(id))),
      tokens: block === '' ? 0 : estimateTokens(block),
    })
    const fblock = await promptHook({ session_id: `f-${n}`, cwd: other.root, prompt: q.question })
    await forgetAsked(other.root, `f-${n}`)
    foreign.push({ injected: fblock !== '', tokens: fblock === '' ? 0 : estimateTokens(fblock) })
  }
}
const logPath = path.join(client, 'logs', 'errors.jsonl')
const logged = existsSync(logPath)
  ? readFileSync(logPath, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
  : []
const late = logged.filter((e) => e.where === 'hook UserPromptSubmit recall').length
const spooled = existsSync(path.join(client, 'spool'))
  ? readdirSync(path.join(client, 'spool')).filter((f) => f.endsWith('.json')).length
  : 0
const tokens = own.filter((r) => r.injected).map((r) => r.tokens)

// ---------------------------------------------------------------- the route alone: POST /v1/injections beside GET /v1/health
const route = { injections: [], health: [] }
const call = async (method, url, body) => {
  const t0 = performance.now()
  const res = await fetch(`${server.url}${url}`, {
    method,
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  })
  await res.text()
  if (!res.ok) throw new Error(`${method} ${url} answered ${res.status}`)
  return performance.now() - t0
}
for (let i = 0; i < timingRuns; i++) {
  const q = convs[0].questions[i % convs[0].questions.length]
  const payload = { session_id: `r-${i}`, cwd: convs[0].root, hook_event_name: 'UserPromptSubmit', prompt: q.question }
  route.injections.push(await call('POST', '/v1/injections', { event: 'UserPromptSubmit', payload, budget: 300 }))
  route.health.push(await call('GET', '/v1/health'))
}

// ---------------------------------------------------------------- hook process time, alternating, same server
const cli = dist('adapters/cli/main.js')
/** Spawns `mnemo hook UserPromptSubmit` (async: the server runs in this process) and resolves with its wall time, ms. */
function hookProcess(payload, env) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const child = spawn(process.execPath, [cli, 'hook', 'UserPromptSubmit'], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve({ ms: performance.now() - t0, out }) : reject(new Error(`hook exited ${code}`))))
    child.stdin.end(JSON.stringify(payload))
  })
}
const timing = { prompt: [], capture: [] }
let printed = 0
const timed = convs[0]
for (let i = 0; i < timingRuns; i++) {
  const q = timed.questions[i % timed.questions.length]
  for (const mode of i % 2 === 0 ? ['prompt', 'capture'] : ['capture', 'prompt']) {
    const payload = {
      hook_event_name: 'UserPromptSubmit',
      session_id: `t-${mode}-${i}`,
      cwd: timed.root,
      transcript_path: '/dev/null',
      prompt: q.question,
    }
    // Each run on its own: a post that timed out would make the next 30 s of hooks spool without trying (the back-off).
    rmSync(path.join(client, 'spool', 'remote-unreachable'), { force: true })
    const r = await hookProcess(payload, { ...clientEnv, ...(mode === 'capture' ? { MNEMO_PROMPT_RECALL: 'off' } : {}) })
    timing[mode].push(r.ms)
    if (mode === 'prompt' && r.out.trim() !== '') printed++
  }
}
await server.close()
const spooledAfter = existsSync(path.join(client, 'spool'))
  ? readdirSync(path.join(client, 'spool')).filter((f) => f.endsWith('.json')).length
  : 0

const pm = pct(timing.prompt, 0.5)
const cm = pct(timing.capture, 0.5)
console.log(
  [
    `team mode (mnemo serve on loopback, ${convs.length} LoCoMo conversations as projects of one store, ${own.length} questions):`,
    `  hit rate ${f3(own.filter((r) => r.hit).length / own.length)} (own conversation's project; injected ${own.filter((r) => r.injected).length}/${own.length})`,
    `  false injection ${f3(foreign.filter((r) => r.injected).length / foreign.length)} (next conversation's project)`,
    `  tokens per injected block: mean ${f2(mean(tokens))}, p95 ${pct(tokens, 0.95)}`,
    `  no answer within the 5 s budgets (logged, nothing printed): ${late} of ${own.length + foreign.length} prompts; events spooled: ${spooled}`,
    `route time, ${timingRuns} requests each, alternating (ms): POST /v1/injections p50 ${f2(pct(route.injections, 0.5))} p95 ${f2(pct(route.injections, 0.95))}; GET /v1/health p50 ${f2(pct(route.health, 0.5))} p95 ${f2(pct(route.health, 0.95))}; ratio p50 ${f2(pct(route.injections, 0.5) / pct(route.health, 0.5))}`,
    `hook process time against the same server, ${timingRuns} runs each, alternating (ms): UserPromptSubmit with recall p50 ${f2(pm)} p95 ${f2(pct(timing.prompt, 0.95))} (${printed} printed a block; ${spooledAfter - spooled} of the ${2 * timingRuns} events spooled: the post missed its 250 ms); plain capture (MNEMO_PROMPT_RECALL=off) p50 ${f2(cm)} p95 ${f2(pct(timing.capture, 0.95))}; ratio p50 ${f2(pm / cm)}`,
  ].join('\n'),
)
if (!args.includes('--keep')) rmSync(work, { recursive: true, force: true })
