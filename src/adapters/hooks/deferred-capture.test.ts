import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { PassThrough, Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { openMnemo } from '../../runtime/open-mnemo.js'
import { Spool } from '../../runtime/spool.js'
import { useScratch } from '../../testing/scratch.js'
import { dumpTables } from '../../testing/sqlite-dump.js'
import { hookPayload } from '../../testing/test-mnemo.js'
import { deferCapture } from './deferred-capture.js'
import { runHook } from './run-hook.js'

const { scratch: home } = useScratch()
afterEach(() => {
  vi.useRealTimers()
})

const CWD = '/work/demo-app'
const env = (dir: string, extra: Record<string, string> = {}) => ({ MNEMO_HOME: dir, HOME: dir, MNEMO_TZ: 'UTC', ...extra })

/** `mnemo hook <event>` as main.js runs it: the deferred capture first, the full hook with what it read otherwise. */
async function hookProcess(
  dir: string,
  event: string,
  stdin: string,
  options: { agent?: string; env?: Record<string, string>; at?: number } = {},
): Promise<{ deferred: boolean; stdout: string }> {
  const agent = options.agent ?? 'claude-code'
  const e = env(dir, options.env)
  const now = () => options.at ?? Date.UTC(2026, 11, 1, 9)
  let stdout = ''
  const write = (t: string) => (stdout += t)
  const outcome = await deferCapture(event, agent, { stdin: Readable.from([stdin]), env: e, cwd: CWD, now, stdout: { write } })
  if (outcome.deferred) return { deferred: true, stdout }
  await runHook(
    event,
    {
      stdin: new PassThrough(),
      stdout: { write },
      env: e,
      cwd: CWD,
      exit: () => {},
      now,
      stdinRead: outcome.stdin,
    },
    agent,
  )
  return { deferred: false, stdout }
}

/** The full hook alone (what every event did before deferred capture). */
async function fullHook(dir: string, event: string, stdin: string, agent = 'claude-code', at = Date.UTC(2026, 11, 1, 9)): Promise<string> {
  let stdout = ''
  await runHook(
    event,
    {
      stdin: Readable.from([stdin]),
      stdout: { write: (t: string) => (stdout += t) },
      env: env(dir),
      cwd: CWD,
      exit: () => {},
      now: () => at,
    },
    agent,
  )
  return stdout
}

/** Everything the store holds, as `mnemo export` writes it, without the manifest's time of export. */
async function exported(dir: string): Promise<string[]> {
  const m = openMnemo({ env: env(dir) })
  try {
    await m.drainSpool()
    const lines: string[] = []
    await m.engine.exportJsonl((line) => lines.push(line))
    return lines.map((l) => l.replace(/"exportedAt":"[^"]*"/, '"exportedAt":"…"'))
  } finally {
    await m.close()
  }
}

/** The rows showing a block writes (what sessions were shown, memories' use), as `dumpTables` gives them. */
const shownTables = (dir: string) => dumpTables(path.join(dir, 'mnemo.db'), ['context_injections', 'memory_usage'])

const read = (file: string) =>
  JSON.stringify({
    session_id: 's1',
    cwd: CWD,
    hook_event_name: 'PostToolUse',
    tool_name: 'Read',
    tool_input: { file_path: file },
    tool_response: 'x',
  })

describe('deferCapture', () => {
  it('spools a Claude Code PostToolUse without opening the store, and the next command stores it', async () => {
    const dir = home()
    const stdin = hookPayload('PostToolUse', {
      tool_name: 'Bash',
      tool_input: { command: 'npm test' },
      tool_response: { stdout: 'zanzibar passed' },
      tool_use_id: 't1',
    })
    expect(await hookProcess(dir, 'PostToolUse', stdin)).toEqual({ deferred: true, stdout: '' })
    expect(existsSync(path.join(dir, 'mnemo.db'))).toBe(false)
    expect(new Spool(path.join(dir, 'spool')).count()).toBe(1)
    const m = openMnemo({ env: env(dir) })
    try {
      expect(await m.drainSpool()).toMatchObject({ drained: 1, remaining: 0 })
      expect(await m.engine.recall('zanzibar')).not.toHaveLength(0)
    } finally {
      await m.close()
    }
  })

  it('redacts secrets before the payload rests in the spool', async () => {
    const dir = home()
    const secret = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'
    const stdin = hookPayload('PostToolUse', {
      tool_name: 'Bash',
      tool_input: { command: `echo ${secret}` },
      tool_response: 'ok',
      tool_use_id: 't2',
    })
    expect((await hookProcess(dir, 'PostToolUse', stdin)).deferred).toBe(true)
    const spoolDir = path.join(dir, 'spool')
    const [file] = readdirSync(spoolDir).filter((f) => f.endsWith('.json'))
    const text = readFileSync(path.join(spoolDir, file!), 'utf8')
    expect(text).not.toContain(secret)
    expect(text).toContain('echo ')
  })

  it('hands every event that may print, or that the full hook must judge, to the full hook', async () => {
    const dir = home()
    const cases: [string, string, Record<string, string>?, string?][] = [
      // Claude Code takes file hints before a tool: a PreToolUse naming a file is the full hook's.
      [
        'PreToolUse',
        JSON.stringify({
          session_id: 's1',
          cwd: CWD,
          hook_event_name: 'PreToolUse',
          tool_name: 'Read',
          tool_input: { file_path: `${CWD}/a.ts` },
        }),
      ],
      ['UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'how do we retry?' })],
      ['SessionStart', hookPayload('SessionStart', { source: 'startup' })],
      ['Stop', hookPayload('Stop', {})],
      // Team mode: the server stores the event.
      ['PostToolUse', read(`${CWD}/a.ts`), { MNEMO_SERVER_URL: 'http://127.0.0.1:9' }],
      // A bad setting: the full hook logs it.
      ['PostToolUse', read(`${CWD}/a.ts`), { MNEMO_CONTEXT_BUDGET: 'lots' }],
      // Not JSON, not an object, an event name mnemo does not know (the payload's may then name it), an unknown agent.
      ['PostToolUse', '{"session_id": '],
      ['PostToolUse', '[1, 2]'],
      ['PostTooluse', read(`${CWD}/a.ts`)],
      ['PostToolUse', read(`${CWD}/a.ts`), {}, 'vim'],
      // Codex, Gemini CLI and OpenCode take file hints after a tool.
      [
        'PostToolUse',
        JSON.stringify({
          session_id: 's1',
          cwd: CWD,
          hook_event_name: 'PostToolUse',
          tool_name: 'apply_patch',
          tool_input: { file_path: `${CWD}/b.ts` },
        }),
        {},
        'codex',
      ],
      [
        'AfterTool',
        JSON.stringify({
          session_id: 's1',
          cwd: CWD,
          hook_event_name: 'AfterTool',
          tool_name: 'read_file',
          tool_input: { file_path: `${CWD}/b.ts` },
        }),
        {},
        'gemini',
      ],
    ]
    for (const [event, stdin, extra, agent] of cases) {
      const outcome = await deferCapture(event, agent ?? 'claude-code', { stdin: Readable.from([stdin]), env: env(dir, extra), cwd: CWD })
      expect(outcome, `${event} ${stdin.slice(0, 60)} ${JSON.stringify(extra)}`).toEqual({
        deferred: false,
        stdin: { ok: true, read: { text: stdin, bytes: Buffer.byteLength(stdin), cutStrings: 0 } },
      })
    }
    // With per-prompt recall off nothing is printed: the PreToolUse naming a file is deferred too.
    const off = await deferCapture('PreToolUse', 'claude-code', {
      stdin: Readable.from([cases[0]![1]]),
      env: env(dir, { MNEMO_PROMPT_RECALL: 'off' }),
      cwd: CWD,
    })
    expect(off.deferred).toBe(true)
    // Before a tool, Codex takes no context: deferred even when a file is named.
    const codex = await deferCapture('PreToolUse', 'codex', { stdin: Readable.from([cases[0]![1]]), env: env(dir), cwd: CWD })
    expect(codex.deferred).toBe(true)
  })

  it('hands the event to the full hook when the spool cannot be written, which stores it itself', async () => {
    const dir = home()
    // A file where the spool folder should be: the spool cannot be made, the store still can.
    writeFileSync(path.join(dir, 'spool'), 'not a folder')
    const stdin = hookPayload('PostToolUse', {
      tool_name: 'Bash',
      tool_input: { command: 'make numbatcheck' },
      tool_response: 'ok',
      tool_use_id: 't3',
    })
    expect(await hookProcess(dir, 'PostToolUse', stdin)).toEqual({ deferred: false, stdout: '' })
    const m = openMnemo({ env: env(dir) })
    try {
      expect(await m.engine.stats()).toMatchObject({ events: 1, observations: 1 })
    } finally {
      await m.close()
    }
  })

  it('hands a stdin that never closes to the full hook, which spools what arrived and logs why', async () => {
    const dir = home()
    const stdin = new PassThrough()
    stdin.write('{"session_id":"s1"')
    let clock = 0
    const outcome = await deferCapture('PostToolUse', 'claude-code', { stdin, env: env(dir), cwd: CWD, now: () => clock++ })
    expect(outcome.deferred).toBe(false)
    if (outcome.deferred || outcome.stdin.ok) throw new Error('expected a failed read')
    expect(outcome.stdin.partial).toBe('{"session_id":"s1"')
    await runHook('PostToolUse', {
      stdin,
      stdout: { write: () => true },
      env: env(dir),
      cwd: CWD,
      exit: () => {},
      stdinRead: outcome.stdin,
    })
    const spool = new Spool(path.join(dir, 'spool'))
    expect(spool.count() + spool.badCount()).toBe(1)
    expect(readFileSync(path.join(dir, 'logs', 'errors.jsonl'), 'utf8')).toMatch(/stdin/)
  })
})

const AGENTS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'fixtures', 'agents')

describe('deferred capture stores what the full hook stores', () => {
  // The payloads the real agents sent (fixtures/agents/<agent>/suite-run), replayed in order once through the full
  // hook alone and once as main.js runs a hook: the stores must be the same, and so must every printed block.
  for (const agent of ['claude-code', 'codex', 'gemini', 'opencode']) {
    const runDir = path.join(AGENTS_DIR, agent, 'suite-run')
    it(`${agent}: the same store and the same output, event by event`, async () => {
      const files = readdirSync(runDir)
        .filter((f) => f.endsWith('.json'))
        .sort()
      expect(files.length).toBeGreaterThan(3)
      const direct = home()
      const deferredHome = home()
      let deferredCount = 0
      let keptShown = 0
      for (const [i, f] of files.entries()) {
        const event = /^s\d+-\d+-([A-Za-z]+)\.json$/.exec(f)![1]!
        const stdin = readFileSync(path.join(runDir, f), 'utf8')
        const at = Date.UTC(2026, 11, 1, 9) + i * 1000
        // The engine's clock too (the context block names when it was made): only Date is faked, timers run.
        vi.useFakeTimers({ toFake: ['Date'] })
        vi.setSystemTime(at)
        const printed = await fullHook(direct, event, stdin, agent, at)
        vi.setSystemTime(at)
        const run = await hookProcess(deferredHome, event, stdin, { agent, at })
        if (run.deferred) deferredCount++
        if (run.deferred && run.stdout !== '') keptShown++
        expect(run.stdout, `${f}`).toBe(printed)
      }
      // The agents' tool events were deferred (Claude Code: after every tool; the others: before a tool naming no file, after every tool).
      expect(deferredCount).toBeGreaterThan(0)
      // A session's SessionEnd keeps the block its project's next SessionStart prints (Claude Code and Gemini CLI end
      // their sessions with one).
      if (agent === 'claude-code' || agent === 'gemini') expect(keptShown).toBeGreaterThan(0)
      // The same store, but for when a deferred event reached it (`receivedAt`: a later hook's drain, never before it fired).
      const received = (lines: string[]) => lines.map((l) => JSON.parse(l) as { ts?: number; receivedAt?: number })
      for (const e of received(await exported(deferredHome)))
        if (e.receivedAt !== undefined) expect(e.receivedAt).toBeGreaterThanOrEqual(e.ts!)
      const sameBut = (lines: string[]) => lines.map((l) => l.replace(/"receivedAt":\d+/, '"receivedAt":…'))
      expect(sameBut(await exported(deferredHome))).toEqual(sameBut(await exported(direct)))
      // What the sessions were shown and the memories' use, as the full hook records them.
      expect(shownTables(deferredHome)).toEqual(shownTables(direct))
    })
  }
})

/** A new Claude Code session starting in `cwd`: its SessionStart payload. */
const sessionStart = (session: string, cwd = CWD) => hookPayload('SessionStart', { source: 'startup' }, session, cwd)

describe('a SessionStart printed from the block kept beside the store', () => {
  it('prints what the full hook prints and stores what it stores, session after session', async () => {
    // The Claude Code suite's sessions, then new sessions one after another (the start-up bench's SessionStart runs):
    // the first new one builds its block and keeps it, the next ones print it until the sessions they add would push
    // a digested session out of the block's list; each time the full hook alone gives the same text.
    const runDir = path.join(AGENTS_DIR, 'claude-code', 'suite-run')
    const direct = home()
    const kept = home()
    let at = Date.UTC(2026, 11, 1, 9)
    const both = async (event: string, stdin: string): Promise<boolean> => {
      at += 1000
      vi.useFakeTimers({ toFake: ['Date'] })
      vi.setSystemTime(at)
      const printed = await fullHook(direct, event, stdin, 'claude-code', at)
      vi.setSystemTime(at)
      const run = await hookProcess(kept, event, stdin, { at })
      expect(run.stdout, `${event} ${stdin.slice(0, 80)}`).toBe(printed)
      return run.deferred && event === 'SessionStart'
    }
    for (const f of readdirSync(runDir)
      .filter((f) => f.endsWith('.json'))
      .sort())
      await both(/^s\d+-\d+-([A-Za-z]+)\.json$/.exec(f)![1]!, readFileSync(path.join(runDir, f), 'utf8'))
    const cwd = '/home/dev/project'
    let served = 0
    for (let i = 0; i < 16; i++) if (await both('SessionStart', sessionStart(`new-${i}`, cwd))) served++
    expect(served).toBeGreaterThan(8)
    // And a session's prompt after its block: the block's items are not shown again (recorded by the drain).
    await both('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'what did the last session change?' }, 'new-15', cwd))
    const sameBut = (lines: string[]) => lines.map((l) => l.replace(/"receivedAt":\d+/, '"receivedAt":…'))
    expect(sameBut(await exported(kept))).toEqual(sameBut(await exported(direct)))
    expect(shownTables(kept)).toEqual(shownTables(direct))
  })

  /** A project with two sessions on record, and a third session's SessionStart that keeps its block. */
  async function keptBlock(dir: string, at: number): Promise<void> {
    for (const [i, s] of ['s1', 's2'].entries()) {
      await fullHook(
        dir,
        'UserPromptSubmit',
        hookPayload('UserPromptSubmit', { prompt: `fix the ledger rounding, part ${i}` }, s),
        'claude-code',
        at,
      )
      await fullHook(
        dir,
        'Stop',
        hookPayload('Stop', { last_assistant_message: `rounded to cents in settle.ts, part ${i}` }, s),
        'claude-code',
        at,
      )
    }
    expect((await hookProcess(dir, 'SessionStart', sessionStart('s3'), { at })).deferred).toBe(false)
    expect(existsSync(path.join(dir, 'context-cache.json'))).toBe(true)
  }

  it('prints it while nothing changed, and builds a new block once another process remembers or forgets a memory', async () => {
    const dir = home()
    const at = Date.UTC(2026, 11, 1, 9)
    // The engine's clock too (the block names when it was made).
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(at)
    await keptBlock(dir, at)
    const first = await hookProcess(dir, 'SessionStart', sessionStart('s4'), { at })
    expect(first.deferred).toBe(true)
    expect(first.stdout).toContain('rounded to cents')
    // Another process remembers something: the kept block no longer holds, the full hook shows the memory.
    const other = openMnemo({ env: env(dir), cwd: CWD })
    let id: string
    try {
      id = (await other.engine.remember('refunds settle on the next business day', { kind: 'fact' })).memory.id
    } finally {
      await other.close()
    }
    const after = await hookProcess(dir, 'SessionStart', sessionStart('s5'), { at })
    expect(after.deferred).toBe(false)
    expect(after.stdout).toContain('refunds settle on the next business day')
    // That SessionStart kept its block (with the memory); the next one prints it.
    const again = await hookProcess(dir, 'SessionStart', sessionStart('s6'), { at })
    expect(again).toEqual({ deferred: true, stdout: after.stdout })
    // Forgotten by another process: not shown again.
    const forgetting = openMnemo({ env: env(dir), cwd: CWD })
    try {
      await forgetting.engine.forget(id)
    } finally {
      await forgetting.close()
    }
    const forgotten = await hookProcess(dir, 'SessionStart', sessionStart('s7'), { at })
    expect(forgotten.deferred).toBe(false)
    expect(forgotten.stdout).not.toContain('refunds settle')
  })

  it('builds the block itself when a tool event waits in the spool, the settings differ, or the session is one it listed', async () => {
    const dir = home()
    const at = Date.UTC(2026, 11, 1, 9)
    await keptBlock(dir, at)
    // A deferred tool event of s2 waits: its drain adds to a session the block digests.
    const tool = hookPayload(
      'PostToolUse',
      { tool_name: 'Bash', tool_input: { command: 'npm test' }, tool_response: 'ok', tool_use_id: 't9' },
      's2',
    )
    expect((await hookProcess(dir, 'PostToolUse', tool, { at })).deferred).toBe(true)
    expect((await hookProcess(dir, 'SessionStart', sessionStart('s4'), { at })).deferred).toBe(false)
    // Another budget: another block.
    expect((await hookProcess(dir, 'SessionStart', sessionStart('s5'), { at, env: { MNEMO_CONTEXT_BUDGET: '300' } })).deferred).toBe(false)
    // The session resumed is one the block lists (it would be left out of its own block).
    expect((await hookProcess(dir, 'SessionStart', sessionStart('s1'), { at })).deferred).toBe(false)
    // That block left s1 itself out, so it was not kept: the next SessionStart builds and keeps its own, the one after prints it.
    expect((await hookProcess(dir, 'SessionStart', sessionStart('s6'), { at })).deferred).toBe(false)
    expect((await hookProcess(dir, 'SessionStart', sessionStart('s7'), { at })).deferred).toBe(true)
  })
})
