#!/usr/bin/env node
// `mnemo serve` throughput and latency benchmark (a benchmark, not a test: it prints figures).
//
//   node scripts/bench-server.mjs [--clients 16] [--events 2000] [--requests 800]
//
// Starts the built CLI's `mnemo serve --port 0` as its own process on a fresh
// data directory, then from this process, with N concurrent clients:
//   1. posts --events Claude Code hook payloads to POST /v1/events (a realistic
//      mix over several sessions): events/s accepted and per-request latency;
//   2. runs --requests recalls through POST /v1/recall: latency p50/p95;
//   3. runs --requests recalls through MCP (streamable HTTP, the SDK client,
//      one connection per client) calling memory_recall: latency p50/p95.
// Prints the figures with the machine's core count and appends one JSON line
// to bench-results/history.jsonl.
import { spawn } from 'node:child_process'
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { quantile } from './bench/run.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const CLI = path.join(ROOT, 'dist/adapters/cli/main.js')
if (!existsSync(CLI)) {
  console.error('dist/ is missing: run `npm run build` first')
  process.exit(1)
}
const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && args[i + 1] ? Number(args[i + 1]) : fallback
}
const CLIENTS = opt('clients', 16)
const EVENTS = opt('events', 2000)
const REQUESTS = opt('requests', 800)

const fmt = (v) => v.toFixed(1)
const summary = (ms) => ({ n: ms.length, p50: quantile(ms, 0.5), p95: quantile(ms, 0.95) })

/** Runs `total` jobs on `clients` concurrent workers; returns each job's latency (ms) and the wall time. */
async function load(total, clients, job) {
  const latencies = []
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: clients }, async (_, worker) => {
      for (;;) {
        const i = next++
        if (i >= total) return
        const t = performance.now()
        await job(i, worker)
        latencies.push(performance.now() - t)
      }
    }),
  )
  return { latencies, wallMs: performance.now() - t0 }
}

// --- the server, as its own process -------------------------------------------
const home = mkdtempSync(path.join(os.tmpdir(), 'mnemo-bench-server-'))
const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--json'], {
  env: { PATH: process.env.PATH, MNEMO_HOME: home },
  stdio: ['ignore', 'pipe', 'pipe'],
})
let stderr = ''
child.stderr.on('data', (c) => (stderr += c))
const { url } = await new Promise((resolve, reject) => {
  let out = ''
  child.stdout.on('data', (c) => {
    out += c
    try {
      resolve(JSON.parse(out))
    } catch {
      // not yet the whole document
    }
  })
  child.on('exit', (code) => reject(new Error(`mnemo serve exited ${code}: ${stderr}`)))
})
const token = readFileSync(path.join(home, 'server-token'), 'utf8').trim()
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }

async function post(route, body, expected) {
  const res = await fetch(`${url}${route}`, { method: 'POST', headers, body: JSON.stringify(body) })
  const text = await res.text()
  if (res.status !== expected) throw new Error(`${route} answered ${res.status}: ${text}`)
  return JSON.parse(text)
}

// --- 1. events ----------------------------------------------------------------
const cwd = '/home/bench/acme-api'
const mix = ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PreToolUse', 'PostToolUse', 'PreToolUse', 'PostToolUseFailure', 'Stop']
const topics = [
  'rate limiting',
  'JWT validation',
  'orders pagination',
  'retry with backoff',
  'CSV export',
  'webhook signatures',
  'cache invalidation',
  'migrations',
]
const tools = [
  [
    'Bash',
    (i) => ({ command: `npm test -- orders-${i % 13}` }),
    (i) => ({ stdout: `PASS test/orders-${i % 13}.test.ts\n  ✓ returns the list (41 ms)\nTests: 2 passed`, stderr: '' }),
  ],
  [
    'Read',
    (i) => ({ file_path: `${cwd}/src/routes/r${i % 37}.ts` }),
    (i) => ({
      type: 'text',
      file: {
        filePath: `${cwd}/src/routes/r${i % 37}.ts`,
        content: `export function handler${i % 37}() { return validateToken() }\n`.repeat(20),
      },
    }),
  ],
  [
    'Edit',
    (i) => ({
      file_path: `${cwd}/src/middleware/m${i % 11}.ts`,
      old_string: 'a',
      new_string: `export async function validateToken${i % 11}() {}`,
    }),
    (i) => ({ filePath: `${cwd}/src/middleware/m${i % 11}.ts` }),
  ],
]
function hookEvent(i) {
  const session = `bench-${Math.floor(i / 50)}`
  const event = mix[i % mix.length]
  const topic = topics[Math.floor(i / 50) % topics.length]
  const [tool, input, response] = tools[i % tools.length]
  const payload = { session_id: session, transcript_path: `/tmp/${session}.jsonl`, cwd, hook_event_name: event }
  if (event === 'UserPromptSubmit') payload.prompt = `Step ${i}: work on ${topic} next to validateToken in src/middleware`
  if (event.includes('ToolUse')) Object.assign(payload, { tool_name: tool, tool_input: input(i), tool_use_id: `toolu_${i}` })
  if (event === 'PostToolUse') payload.tool_response = response(i)
  if (event === 'PostToolUseFailure') payload.error = `Exit code 1\nFAIL test/orders-${i % 13}.test.ts: ${topic} broke`
  if (event === 'Stop') payload.last_assistant_message = `Done with step ${i} on ${topic}.`
  return { event, payload }
}
let stored = 0
const events = await load(EVENTS, CLIENTS, async (i) => {
  const r = await post('/v1/events', hookEvent(i), 202)
  if (r.stored) stored++
})
const eventsPerSec = (EVENTS / events.wallMs) * 1000

// --- 2. REST recall -----------------------------------------------------------
const queries = [
  'validateToken',
  'rate limiting middleware',
  'src/middleware/m3.ts',
  'orders test failing',
  'what broke in webhook signatures?',
  'CSV export',
  'retry with backoff',
  'JWT',
]
await post('/v1/recall', { query: 'warm up', project: 'acme-api' }, 200)
const rest = await load(REQUESTS, CLIENTS, async (i) => {
  await post('/v1/recall', { query: queries[i % queries.length], project: 'acme-api' }, 200)
})

// --- 3. MCP recall ------------------------------------------------------------
const clients = await Promise.all(
  Array.from({ length: CLIENTS }, async () => {
    const client = new Client({ name: 'bench', version: '0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    )
    return client
  }),
)
const mcp = await load(REQUESTS, CLIENTS, async (i, worker) => {
  const r = await clients[worker].callTool({
    name: 'memory_recall',
    arguments: { query: queries[i % queries.length], project: 'acme-api' },
  })
  if (r.isError) throw new Error(`memory_recall failed: ${JSON.stringify(r.content)}`)
})
await Promise.all(clients.map((c) => c.close()))

// --- stop the server gracefully -------------------------------------------------
const exited = new Promise((resolve) => child.on('exit', resolve))
child.kill('SIGTERM')
const exitCode = await exited
rmSync(home, { recursive: true, force: true })

const cores = os.availableParallelism?.() ?? os.cpus().length
const result = {
  at: new Date().toISOString(),
  bench: 'server',
  cores,
  node: process.version,
  clients: CLIENTS,
  events: { ...summary(events.latencies), stored, perSec: eventsPerSec },
  restRecall: summary(rest.latencies),
  mcpRecall: summary(mcp.latencies),
  serverExit: exitCode,
}
console.log(`mnemo serve on ${cores} core(s), Node ${process.version}, ${CLIENTS} concurrent clients`)
console.log(
  `  POST /v1/events   ${EVENTS} events (${stored} stored): ${eventsPerSec.toFixed(0)} events/s accepted; latency p50 ${fmt(result.events.p50)} ms, p95 ${fmt(result.events.p95)} ms`,
)
console.log(`  POST /v1/recall   ${REQUESTS} requests: p50 ${fmt(result.restRecall.p50)} ms, p95 ${fmt(result.restRecall.p95)} ms`)
console.log(`  MCP memory_recall ${REQUESTS} requests: p50 ${fmt(result.mcpRecall.p50)} ms, p95 ${fmt(result.mcpRecall.p95)} ms`)
console.log(`  server exit code after SIGTERM: ${exitCode}`)
mkdirSync(path.join(ROOT, 'bench-results'), { recursive: true })
appendFileSync(path.join(ROOT, 'bench-results/history.jsonl'), `${JSON.stringify(result)}\n`)
