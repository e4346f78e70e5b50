import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { openMnemo } from '../../runtime/open-mnemo.js'
import { tempDir } from '../../testing/test-mnemo.js'

// These tests run the built CLI as separate processes, exactly as Claude Code
// runs the command `mnemo connect` writes: `node <abs>/dist/adapters/cli/main.js hook <Event>`.
const ROOT = path.resolve(import.meta.dirname, '../../..')
const CLI = path.join(ROOT, 'dist/adapters/cli/main.js')
const SESSION = path.join(ROOT, 'fixtures/demo/claude-code-session.jsonl')

const cleanups: (() => void)[] = []
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()!()
})
beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does)`)
})

function home(): string {
  const t = tempDir()
  cleanups.push(t.cleanup)
  return t.dir
}

function runCli(mnemoHome: string, args: string[], input?: string) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    input,
    env: { PATH: process.env['PATH'], MNEMO_HOME: mnemoHome, HOME: mnemoHome },
    encoding: 'utf8',
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** Starts `n` hook processes at once and resolves with their exit codes. */
function parallelHooks(mnemoHome: string, event: string, payloads: string[]): Promise<number[]> {
  return Promise.all(
    payloads.map(
      (payload) =>
        new Promise<number>((resolve, reject) => {
          const child = spawn(process.execPath, [CLI, 'hook', event], { env: { PATH: process.env['PATH'], MNEMO_HOME: mnemoHome } })
          child.on('error', reject)
          child.on('close', (code) => resolve(code ?? -1))
          child.stdin.end(payload)
        }),
    ),
  )
}

describe('`mnemo hook --home <dir>`', () => {
  it('stores into that data directory, not MNEMO_HOME', async () => {
    const env = home()
    const chosen = home()
    for (const args of [['--home', chosen], [`--home=${chosen}`]]) {
      const payload = JSON.stringify({
        session_id: `s-${args.length}`,
        cwd: '/p/shop',
        hook_event_name: 'UserPromptSubmit',
        prompt: `add a cart endpoint ${args.length}`,
      })
      const r = runCli(env, ['hook', 'UserPromptSubmit', ...args], payload)
      expect(r.code, r.stderr).toBe(0)
    }
    const chosenStore = openMnemo({ env: { MNEMO_HOME: chosen } })
    const envStore = openMnemo({ env: { MNEMO_HOME: env } })
    try {
      expect((await chosenStore.engine.stats()).observations).toBe(2)
      expect((await envStore.engine.stats()).observations).toBe(0)
    } finally {
      await chosenStore.close()
      await envStore.close()
    }
  })
})

describe('a scripted Claude Code session through `mnemo hook`, one process per event', () => {
  it('is recalled, and injected into the next session', () => {
    const h = home()
    const events = readFileSync(SESSION, 'utf8')
      .split('\n')
      .filter((l) => l.trim().length > 0)
      .map((l) => JSON.parse(l) as { event: string; payload: { session_id: string } })
    let lastStart = ''
    for (const { event, payload } of events) {
      const r = runCli(h, ['hook', event], JSON.stringify(payload))
      expect(r.code, `${event}: ${r.stderr}`).toBe(0)
      if (event === 'SessionStart') lastStart = r.stdout
    }
    // The second session's SessionStart printed the first session's digest for Claude Code.
    const injected = (JSON.parse(lastStart) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext
    expect(injected).toContain('Asked: Add JWT authentication to the API')
    expect(injected).toContain('src/middleware/auth.ts')
    expect(injected).toContain('Commands: `npm install jose`, `npm test -- orders`')

    const context = runCli(h, ['context', '--project', 'acme-api'])
    expect(context.code).toBe(0)
    expect(context.stdout).toContain('Errors: Bash: npm test -- orders → Exit code 1')

    // The CLI runs in this repository's folder, which holds nothing captured: the session's project is named by --all-projects.
    const recall = runCli(h, ['recall', 'validateToken', '--all-projects', '--json'])
    expect(recall.code).toBe(0)
    const hits = (JSON.parse(recall.stdout) as { hits: { kind: string; project: string; snippet: string }[] }).hits
    expect(hits.length).toBeGreaterThanOrEqual(3)
    expect(hits.every((x) => x.project === 'acme-api')).toBe(true)
    expect(hits.map((x) => x.kind)).toContain('error')

    const sessions = JSON.parse(runCli(h, ['sessions', '--all-projects', '--json']).stdout) as {
      sessions: { endedAt: string | null; observations: number }[]
    }
    expect(sessions.sessions).toHaveLength(2)
    expect(sessions.sessions[1]).toMatchObject({ observations: 11, endedAt: expect.any(String) })
  })
})

// PostToolUse is deferred (each process spools it, the next command stores it); PostToolUseFailure is written by each
// hook process itself, so eight of them contend for the store's write lock.
describe.each(['PostToolUse', 'PostToolUseFailure'])('concurrent %s hook processes', (event) => {
  const payload = (id: string) =>
    JSON.stringify({
      session_id: 'par',
      cwd: '/work/par',
      hook_event_name: event,
      tool_name: 'Bash',
      tool_use_id: id,
      tool_input: { command: `echo ${id}` },
      ...(event === 'PostToolUse' ? { tool_response: { stdout: id } } : { error: `exit 1: ${id}` }),
    })

  it('store exactly one event for eight simultaneous copies of one delivery', async () => {
    const h = home()
    const codes = await parallelHooks(
      h,
      event,
      Array.from({ length: 8 }, () => payload('toolu_same')),
    )
    expect(codes).toEqual(Array(8).fill(0))
    // Deferred, or on a loaded machine past a hook's lock deadline, an event waits in the spool; any command drains it.
    expect(runCli(h, ['status', '--json']).code).toBe(0)
    const m = openMnemo({ env: { MNEMO_HOME: h } })
    expect(await m.engine.stats()).toMatchObject({ events: 1, observations: 1 })
    expect(m.spool.count()).toBe(0)
    await m.close()
  })

  it('lose none of eight simultaneous different events', async () => {
    const h = home()
    const codes = await parallelHooks(
      h,
      event,
      Array.from({ length: 8 }, (_, i) => payload(`toolu_${i}`)),
    )
    expect(codes).toEqual(Array(8).fill(0))
    expect(runCli(h, ['status', '--json']).code).toBe(0)
    const m = openMnemo({ env: { MNEMO_HOME: h } })
    expect(await m.engine.stats()).toMatchObject({ events: 8, observations: 8 })
    expect(m.spool.count()).toBe(0)
    await m.close()
  })
})

describe('a deferred tool event', () => {
  it('is spooled by its hook process without opening the store, and the next command stores and recalls it', () => {
    const h = home()
    const stdin = JSON.stringify({
      session_id: 'sess-d',
      cwd: '/work/deferred',
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_use_id: 'toolu_d1',
      tool_input: { command: 'make wombatdeploy' },
      tool_response: { stdout: 'done' },
    })
    expect(runCli(h, ['hook', 'PostToolUse'], stdin)).toMatchObject({ code: 0, stdout: '', stderr: '' })
    expect(existsSync(path.join(h, 'mnemo.db'))).toBe(false)
    expect(readdirSync(path.join(h, 'spool')).filter((f) => f.endsWith('.json'))).toHaveLength(1)
    const recalled = runCli(h, ['recall', 'wombatdeploy', '--project', '/work/deferred', '--json'])
    expect(recalled.code).toBe(0)
    expect(recalled.stdout).toContain('wombatdeploy')
    expect(readdirSync(path.join(h, 'spool')).filter((f) => f.endsWith('.json'))).toHaveLength(0)
  })
})
