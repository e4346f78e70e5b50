import { existsSync, readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { HookAgent, Observation } from '../../core/types.js'
import { createTestEngine } from '../../testing/test-mnemo.js'

// The hook payloads the real agents sent during the last `UPDATE_AGENT_FIXTURES=1 npm run test:agents`
// (fixtures/agents/<agent>/suite-run/s<session>-<nn>-<Event>.json, machine paths replaced by /home/dev/…),
// replayed through the capture path `mnemo hook` uses, so the unit suite follows the agents' real formats.

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'fixtures', 'agents')
const PROJECT = '/home/dev/project'
const AGENTS: readonly HookAgent[] = ['claude-code', 'codex', 'gemini', 'opencode']
const WORD = 'zanzibarquokka'

interface Fixture {
  file: string
  session: number
  event: string
  stdin: string
  stdout: string | undefined
}

function fixtures(agent: string): Fixture[] {
  const dir = path.join(ROOT, agent, 'suite-run')
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const m = /^s(\d+)-\d+-([A-Za-z]+)\.json$/.exec(f)
      if (m === null) throw new Error(`unexpected fixture name ${f}`)
      const out = path.join(dir, f.replace(/\.json$/, '.mnemo-stdout'))
      return {
        file: f,
        session: Number(m[1]),
        event: m[2]!,
        stdin: readFileSync(path.join(dir, f), 'utf8'),
        stdout: existsSync(out) ? readFileSync(out, 'utf8') : undefined,
      }
    })
}

describe.each(AGENTS)('the %s payloads of the agent suite', (agent) => {
  const all = fixtures(agent)

  it('are there for two sessions, each payload JSON with the session id and the project folder', () => {
    expect(all.length).toBeGreaterThan(4)
    expect([...new Set(all.map((f) => f.session))]).toEqual([1, 2])
    for (const f of all) {
      const p = JSON.parse(f.stdin) as { session_id?: unknown; cwd?: unknown }
      expect(typeof p.session_id, f.file).toBe('string')
      expect(p.cwd, f.file).toBe(PROJECT)
    }
  })

  it('replay into one project: session 1 keeps the prompt and the shell call with its output', async () => {
    const { engine, clock } = createTestEngine({ cwd: PROJECT })
    for (const f of all) {
      clock.advance(1000)
      await engine.captureHook(f.event, f.stdin, agent, clock.now())
    }
    const sessions = (await engine.sessions()).reverse()
    expect(sessions).toHaveLength(2)
    const shown = await engine.show(sessions[0]!.id)
    if (shown.type !== 'session') throw new Error('not a session')
    expect(shown.detail.project?.root).toBe(PROJECT)
    const obs = shown.detail.observations
    expect(obs.some((o) => o.kind === 'prompt' && o.text.includes(`write the word ${WORD} into notes.txt`))).toBe(true)
    expect(
      obs.some((o) => o.tool !== undefined && o.tool !== null && o.text.includes('notes.txt') && o.text.includes(WORD.toUpperCase())),
    ).toBe(true)
  })

  it("replay stores no mnemo block as anybody's words and no mnemo tool call, in either session", async () => {
    const { engine, clock } = createTestEngine({ cwd: PROJECT })
    for (const f of all) {
      clock.advance(1000)
      await engine.captureHook(f.event, f.stdin, agent, clock.now())
    }
    const obs: Observation[] = []
    for (const s of await engine.sessions()) {
      const d = await engine.show(s.id)
      if (d.type === 'session') obs.push(...d.detail.observations)
    }
    expect(
      obs
        .filter((o) => (o.kind === 'prompt' || o.kind === 'message') && /mnemo-context|hook_context/.test(o.text))
        .map((o) => o.text.slice(0, 80)),
    ).toEqual([])
    expect(obs.filter((o) => typeof o.tool === 'string' && /memory_recall/.test(o.tool)).map((o) => o.tool)).toEqual([])
  })

  it("session 2 began with a context block that holds session 1's work", () => {
    const start = all.find((f) => f.session === 2 && f.event === 'SessionStart')
    expect(start?.stdout).toBeDefined()
    const ctx =
      (JSON.parse(start!.stdout!) as { hookSpecificOutput?: { additionalContext?: string } }).hookSpecificOutput?.additionalContext ?? ''
    expect(ctx).toMatch(/^<mnemo-context /)
    expect(ctx).toContain('notes.txt')
  })
})
