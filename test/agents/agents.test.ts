/**
 * The real-agent suite: for each agent in agents.ts, from a clean scratch
 * HOME, MNEMO_HOME and git project, `mnemo connect <agent>`, then two
 * headless sessions through the real binary against the scripted fake model
 * (session 1 runs a shell command, session 2 asks the model to use mnemo's
 * recall tool), then assertions on what mnemo stored and what reached the
 * model. Prints, per agent, the events stored per session, each assertion's
 * result, and the hooks' median wall time beside a bare `node -e 0` measured
 * by the same timer in the same run. Run with `npm run test:agents`.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { AGENTS, type AgentSpec } from './agents.js'
import { RECALL_CUE, startFakeModel, type FakeModel } from './fake-model.js'
import {
  createWorld,
  median,
  mnemo,
  placeholderPaths,
  runAgent,
  storedEvents,
  storedSessions,
  type AgentRun,
  type ExportedEvent,
  type HookCall,
  type StoredSession,
  type World,
} from './harness.js'
import { REPO_DIR, agentBin } from './install-state.js'

const skipReason = inject('agentsSkipReason')
const SCRATCH = join(process.env.MNEMO_AGENTS_TMP ?? '/tmp', `mnemo-agents-${process.pid}`)
/** Written when UPDATE_AGENT_FIXTURES=1 (to fixtures/agents/<agent>/suite-run/): the payloads each agent sent its hooks, machine paths replaced. */
const FIXTURES = join(REPO_DIR, 'fixtures', 'agents')
const WORD = 'zanzibarquokka'
const PROMPT_1 = `Please write the word ${WORD} into notes.txt in this project.`
const PROMPT_2 = `${RECALL_CUE}: what did we do in the last session? Use the memory recall tool.`
/** A memory about what PROMPT_2 asks, remembered before 20 newer ones (see session 2's per-prompt check). */
const OLDER_MEMORY = 'Use the memory tool for anything about an earlier session: it reads what mnemo kept.'
/** mnemo's own block, however an agent wraps or escapes it. */
const MNEMO_BLOCK = /mnemo-context|hook_context/
const TOOL_EVENTS = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure'])

interface Report {
  connect: string
  events: string[]
  checks: Array<[string, string]>
  hookMs: number[]
  bareMs: number[]
  hookEvents: string[]
}
const reports = new Map<string, Report>()

afterAll(() => {
  rmSync(SCRATCH, { recursive: true, force: true })
  if (reports.size === 0) return
  const lines = ['', '=== agent suite ===']
  for (const [id, r] of reports) {
    lines.push(`--- ${id}: ${r.connect}`)
    for (const e of r.events) lines.push(`  events ${e}`)
    for (const [name, result] of r.checks)
      lines.push(
        `  ${result === 'ok' ? 'ok  ' : result.startsWith('pending: ') ? 'SKIP' : 'FAIL'} ${name}${result === 'ok' ? '' : `: ${result}`}`,
      )
    const hm = median(r.hookMs)
    const bm = median(r.bareMs)
    lines.push(
      `  hook wall time: median ${hm} ms over ${r.hookMs.length} hook runs; bare \`node -e 0\` median ${bm} ms (same timer, same runs); ratio ${(hm / bm).toFixed(2)}`,
    )
    const perEvent = [...new Set(r.hookEvents)].map((e) => `${e} ${median(r.hookMs.filter((_, i) => r.hookEvents[i] === e))}`)
    lines.push(`  per event (median ms): ${perEvent.join(', ')}`)
  }
  process.stdout.write(`${lines.join('\n')}\n`)
})

function sessionsByKey(events: readonly ExportedEvent[]): Map<string, ExportedEvent[]> {
  const out = new Map<string, ExportedEvent[]>()
  for (const e of events) out.set(e.sessionKey, [...(out.get(e.sessionKey) ?? []), e])
  return out
}

const countTypes = (events: readonly ExportedEvent[]): Record<string, number> => {
  const c: Record<string, number> = {}
  for (const e of events) c[e.type] = (c[e.type] ?? 0) + 1
  return c
}

function writeFixtures(spec: AgentSpec, w: World, runs: readonly AgentRun[]): void {
  const dirs = [
    join(w.out, 'payloads'),
    ...(process.env.UPDATE_AGENT_FIXTURES === '1' ? [join(FIXTURES, spec.mnemoAgent, 'suite-run')] : []),
  ]
  for (const dir of dirs) {
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
    // Numbered by the session the payload names (a hook may finish after its agent exited), in firing order.
    const all = runs.flatMap((r) => r.hooks)
    const sessionOf = (h: HookCall): string => {
      const p = h.payload as { session_id?: unknown } | undefined
      return typeof p?.session_id === 'string' ? p.session_id : ''
    }
    const order = [...new Set(all.map(sessionOf))]
    for (const [i, key] of order.entries()) {
      for (const [j, h] of all.filter((x) => sessionOf(x) === key).entries()) {
        const name = `s${i + 1}-${String(j + 1).padStart(2, '0')}-${h.event}`
        writeFileSync(join(dir, `${name}.json`), placeholderPaths(w, h.stdin.endsWith('\n') ? h.stdin : `${h.stdin}\n`))
        if (h.stdout.trim() !== '') writeFileSync(join(dir, `${name}.mnemo-stdout`), placeholderPaths(w, h.stdout))
      }
    }
  }
}

for (const spec of AGENTS) {
  describe.skipIf(skipReason !== '')(`${spec.id} (real ${spec.bin} binary)${skipReason === '' ? '' : ` — skipped: ${skipReason}`}`, () => {
    let w: World
    let model: FakeModel
    let s1: AgentRun
    let s2: AgentRun
    let sessions: StoredSession[]
    let byKey: Map<string, ExportedEvent[]>
    let keys: string[]
    const report: Report = { connect: '', events: [], checks: [], hookMs: [], bareMs: [], hookEvents: [] }
    reports.set(spec.id, report)

    const check = (name: string, fn: () => void): void => {
      const pending = Object.entries(spec.pending ?? {}).find(([prefix]) => name.startsWith(prefix))?.[1]
      if (pending !== undefined) {
        report.checks.push([name, `pending: ${pending}`])
        it.skip(`${name} (pending: ${pending})`, fn)
        return
      }
      it(name, () => {
        try {
          fn()
          report.checks.push([name, 'ok'])
        } catch (err) {
          report.checks.push([name, ((err as Error).message.split('\n')[0] ?? '').slice(0, 300)])
          throw err
        }
      })
    }

    beforeAll(async () => {
      w = createWorld(SCRATCH, spec.id)
      model = await startFakeModel(WORD)
      const connected = mnemo(w, ['connect', spec.mnemoAgent, '--node', w.nodeWrapper, '--json'])
      writeFileSync(join(w.out, 'connect.json'), connected)
      const doc = JSON.parse(connected) as { files: Array<{ path: string; changed: boolean }>; notes: string[] }
      report.connect = `connect wrote ${doc.files.filter((f) => f.changed).length} files${doc.notes.length > 0 ? `; notes: ${doc.notes.join(' | ')}` : ''}`
      spec.prepare?.(w, model)
      const run = (label: string, prompt: string): Promise<AgentRun> => {
        const c = spec.command(w, model, prompt)
        return runAgent(w, model, label, agentBin(spec.bin), c.args, c.env)
      }
      s1 = await run('s1', PROMPT_1)
      // An older memory about what session 2 asks, then newer ones, so SessionStart's block (the newest memories)
      // leaves it out and only the per-prompt block (UserPromptSubmit / BeforeAgent) can bring it.
      mnemo(w, ['remember', OLDER_MEMORY])
      for (let i = 1; i <= 20; i++) mnemo(w, ['remember', `filler decision ${i} about the unrelated deployment pipeline stage ${i}`])
      s2 = await run('s2', PROMPT_2)
      await model.close()
      writeFixtures(spec, w, [s1, s2])
      byKey = sessionsByKey(storedEvents(w).filter((e) => e.agent === spec.mnemoAgent))
      keys = [...byKey.keys()]
      sessions = storedSessions(w)
      for (const [i, k] of keys.entries()) report.events.push(`session ${i + 1}: ${JSON.stringify(countTypes(byKey.get(k)!))}`)
      for (const h of [...s1.hooks, ...s2.hooks]) {
        report.hookMs.push(h.hookMs)
        report.bareMs.push(h.bareNodeMs)
        report.hookEvents.push(h.event)
      }
      writeFileSync(
        join(w.out, 'hooks.jsonl'),
        `${[...s1.hooks, ...s2.hooks]
          .map((h) => JSON.stringify({ event: h.event, rc: h.rc, hookMs: h.hookMs, bareNodeMs: h.bareNodeMs }))
          .join('\n')}\n`,
      )
    }, 400_000)

    check('both sessions ran to the end (exit 0) and every hook exited 0', () => {
      expect([s1.exitCode, s2.exitCode], `${s1.stderr.slice(-500)}\n${s2.stderr.slice(-500)}`).toEqual([0, 0])
      expect(s1.hooks.length).toBeGreaterThan(0)
      expect([...s1.hooks, ...s2.hooks].filter((h) => h.rc !== 0).map((h) => h.event)).toEqual([])
    })

    check('two sessions stored, each expected hook event once, all under the project', () => {
      expect(keys).toHaveLength(2)
      for (const [i, k] of keys.entries()) {
        const types = countTypes(byKey.get(k)!)
        // Session 2's tool calls are mnemo's own recall (whose events mnemo drops) and, where the agent offers mnemo's
        // tools only with a later request, `sleep 1` waits: its tool events are not counted.
        const expected = i === 0 ? spec.sessionEvents : spec.sessionEvents.filter((t) => !TOOL_EVENTS.has(t))
        for (const t of expected) expect({ session: i + 1, event: t, count: types[t] ?? 0 }).toEqual({ session: i + 1, event: t, count: 1 })
      }
      const roots = new Set([...byKey.values()].flat().map((e) => e.project.root))
      expect([...roots]).toEqual([w.project])
    })

    check("session 1: the prompt is stored as the user's words, as typed", () => {
      const prompts = sessions[0]!.observations.filter((o) => o.kind === 'prompt')
      expect(prompts.map((o) => o.text)).toContain(spec.promptAsSent?.(PROMPT_1) ?? PROMPT_1)
    })

    check('session 1: the shell tool call is stored with its command and output', () => {
      const tools = sessions[0]!.observations.filter((o) => o.tool !== null && spec.shellTool.test(o.tool))
      expect(tools.length, JSON.stringify(sessions[0]!.observations.map((o) => [o.kind, o.tool]))).toBeGreaterThan(0)
      expect(
        tools.some((o) => o.text.includes('notes.txt') && o.text.includes(WORD.toUpperCase())),
        tools.map((o) => o.text).join('\n---\n'),
      ).toBe(true)
    })

    check('session 1: the final answer is stored', () => {
      const said = sessions[0]!.observations.filter((o) => o.role === 'assistant').map((o) => o.text)
      expect(
        said.some((t) => t.includes('Final answer')),
        JSON.stringify(said),
      ).toBe(true)
    })

    check("no mnemo block is stored as anybody's words, and no tool output keeps agent wrappers", () => {
      const all = sessions.flatMap((s) => s.observations)
      expect(
        all
          .filter((o) => (o.kind === 'prompt' || o.role === 'user' || o.role === 'assistant') && MNEMO_BLOCK.test(o.text))
          .map((o) => o.text.slice(0, 120)),
      ).toEqual([])
      expect(
        all.filter((o) => o.tool !== null && /<\/?untrusted_context>|Process Group PGID/.test(o.text)).map((o) => o.text.slice(0, 120)),
      ).toEqual([])
    })

    check("session 2: the first model request holds the context block with session 1's work", () => {
      // The agent's own loop: requests that offer tools (OpenCode's title request offers none).
      const first = s2.modelCalls.find((r) => (r.brain?.toolNames.length ?? 0) > 0)
      expect(first, 'no model request with tools in session 2').toBeDefined()
      expect(first!.raw).toMatch(/mnemo-context/)
      const block =
        /<mnemo-context[\s\S]*?mnemo-context>/.exec(
          first!.raw
            .replace(/\\u003c/g, '<')
            .replace(/\\u003e/g, '>')
            .replace(/&lt;/g, '<')
            .replace(/&gt;/g, '>'),
        )?.[0] ?? first!.raw
      expect(block).toContain('notes.txt')
    })

    check('session 2: the per-prompt block brings the older memory the SessionStart block left out', () => {
      const raw = s2.modelCalls.map((r) =>
        r.raw
          .replace(/\\u003c/g, '<')
          .replace(/\\u003e/g, '>')
          .replace(/&lt;/g, '<')
          .replace(/&gt;/g, '>'),
      )
      expect(
        raw.some((r) => /<mnemo-context[\s\S]*?mnemo-context>/.exec(r)?.[0].includes(OLDER_MEMORY)),
        'the SessionStart block already held it',
      ).toBe(false)
      expect(
        raw.some((r) => /<mnemo-recall>[\s\S]*?<\/mnemo-recall>/.exec(r)?.[0].includes(OLDER_MEMORY)),
        'no model request of session 2 holds a <mnemo-recall> block with it',
      ).toBe(true)
      // It came with the prompt: the first request of the agent's own loop (the one offering tools) already holds it.
      const first = s2.modelCalls.findIndex((r) => (r.brain?.toolNames.length ?? 0) > 0)
      expect(
        /<mnemo-recall>[\s\S]*?<\/mnemo-recall>/.exec(raw[first] ?? '')?.[0] ?? '',
        'the first model request after the prompt has no <mnemo-recall> block',
      ).toContain(OLDER_MEMORY)
    })

    check("session 2: mnemo's MCP tools are offered to the model", () => {
      // Codex starts MCP servers beside its first request, so the tools may come with a later one.
      const names = [...new Set(s2.modelCalls.flatMap((r) => r.brain?.toolNames ?? []))]
      expect(names.filter((n) => /memory_(recall|remember)$/.test(n)).length, names.join(', ')).toBeGreaterThanOrEqual(2)
    })

    check("session 2: the model's memory_recall call returns session 1's work, and its next request holds it", () => {
      const i = s2.modelCalls.findIndex((r) => r.reply?.kind === 'tool' && /memory_recall$/.test(r.reply.name))
      expect(i, 'the model never called memory_recall').toBeGreaterThanOrEqual(0)
      const next = s2.modelCalls[i + 1]
      expect(next?.brain?.lastIsToolResult).toBe(true)
      expect(next!.brain!.toolResultText).toContain(WORD)
    })

    check("session 2: mnemo's own recall call is not captured as a tool observation", () => {
      const own = sessions
        .flatMap((s) => s.observations)
        .filter((o) => o.tool !== null && /memory_(recall|remember|forget|context)/.test(o.tool))
      expect(own.map((o) => o.tool)).toEqual([])
    })

    check('mnemo status shows no capture errors and nothing left in the spool', () => {
      const st = JSON.parse(mnemo(w, ['status', '--json'])) as { errors?: unknown[]; spool?: { pending?: number; bad?: number } }
      expect({ errors: st.errors ?? [], pending: st.spool?.pending ?? 0, bad: st.spool?.bad ?? 0 }).toEqual({
        errors: [],
        pending: 0,
        bad: 0,
      })
    })
  })
}
