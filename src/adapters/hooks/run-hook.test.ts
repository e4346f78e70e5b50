import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Spool } from '../../runtime/spool.js'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { openMnemo } from '../../runtime/open-mnemo.js'
import { hookPayload, tempDir } from '../../testing/test-mnemo.js'
import { checkRemote } from '../../runtime/remote-server.js'
import { CAN_MAKE_UNWRITABLE, makeUnwritable } from '../../testing/unwritable.js'
import { HOOK_DEADLINE_MS, runHook, type HookIo } from './run-hook.js'

const cleanups: (() => void)[] = []
afterEach(() => {
  vi.useRealTimers()
  while (cleanups.length > 0) cleanups.pop()!()
})

function home(): string {
  const t = tempDir()
  cleanups.push(t.cleanup)
  return t.dir
}

/** Runs the hook in-process with `stdin` and returns what it printed and its exit code. */
async function hook(
  mnemoHome: string,
  event: string,
  stdin: string | undefined,
  env: Record<string, string> = {},
  io: Pick<HookIo, 'maxStdinBytes' | 'stderr'> = {},
): Promise<{ stdout: string; code: number | undefined }> {
  const input = new PassThrough()
  let stdout = ''
  let code: number | undefined
  const run = runHook(event, {
    stdin: input,
    stdout: { write: (t: string) => (stdout += t) },
    env: { MNEMO_HOME: mnemoHome, HOME: mnemoHome, ...env },
    cwd: '/work/demo-app',
    exit: (c) => {
      code = c
    },
    ...io,
  })
  if (stdin !== undefined) input.end(stdin)
  await run
  return { stdout, code }
}

/** Runs the hook as `mnemo hook <event> --agent <agent>` would. */
async function hookAs(
  mnemoHome: string,
  event: string,
  stdin: string,
  agent: string,
): Promise<{ stdout: string; code: number | undefined }> {
  const input = new PassThrough()
  let stdout = ''
  let code: number | undefined
  const run = runHook(
    event,
    {
      stdin: input,
      stdout: { write: (t: string) => (stdout += t) },
      env: { MNEMO_HOME: mnemoHome, HOME: mnemoHome },
      cwd: '/work/demo-app',
      exit: (c) => (code = c),
    },
    agent,
  )
  input.end(stdin)
  await run
  return { stdout, code }
}

/** A data directory whose project /work/demo-app holds one decision: the public API is rate-limited with a token bucket. */
async function homeWithRateLimitDecision(): Promise<string> {
  const h = home()
  const m = openMnemo({ env: { MNEMO_HOME: h, HOME: h }, cwd: '/work/demo-app' })
  await m.engine.remember('We rate-limit the public API with a token bucket in src/middleware/rate-limit.ts.', {
    project: { root: '/work/demo-app', name: 'demo-app' },
    kind: 'decision',
  })
  await m.close()
  return h
}

async function counts(mnemoHome: string) {
  const m = openMnemo({ env: { MNEMO_HOME: mnemoHome } })
  try {
    return m.engine.stats()
  } finally {
    await m.close()
  }
}

describe('mnemo hook', () => {
  it('stores the event and exits 0 printing nothing for ordinary events', async () => {
    const h = home()
    const r = await hook(h, 'UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'add caching' }))
    expect(r).toEqual({ stdout: '', code: 0 })
    expect(await counts(h)).toMatchObject({ events: 1, observations: 1 })
  })

  it('prints the context block as Claude Code SessionStart JSON, and as text for PreCompact', async () => {
    const h = home()
    await hook(h, 'UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'add caching to the orders endpoint' }, 'earlier'))
    const start = await hook(h, 'SessionStart', hookPayload('SessionStart', { source: 'startup' }, 'now'))
    const parsed = JSON.parse(start.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } }
    expect(parsed.hookSpecificOutput.hookEventName).toBe('SessionStart')
    expect(parsed.hookSpecificOutput.additionalContext).toContain('- Asked: add caching to the orders endpoint')
    const compact = await hook(h, 'PreCompact', hookPayload('PreCompact', { trigger: 'auto' }, 'now'))
    expect(compact.stdout.startsWith('<mnemo-context')).toBe(true)
  })

  it('injects per-prompt recall through each agent’s channel for it, and nothing when turned off', async () => {
    const h = await homeWithRateLimitDecision()
    const ask = (session: string) => hookPayload('UserPromptSubmit', { prompt: 'how do we rate-limit the API?' }, session)
    const out = (r: { stdout: string }) =>
      JSON.parse(r.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } }
    const claude = out(await hook(h, 'UserPromptSubmit', ask('c1')))
    expect(claude.hookSpecificOutput.hookEventName).toBe('UserPromptSubmit')
    expect(claude.hookSpecificOutput.additionalContext).toMatch(/^<mnemo-recall>\n[\s\S]*token bucket[\s\S]*<\/mnemo-recall>$/)
    // Gemini CLI passes the SessionStart block back inside the prompt (escaped, in <hook_context>): only the user's words are recalled for.
    const wrapped = (session: string) =>
      hookPayload(
        'BeforeAgent',
        {
          prompt:
            '<hook_context>&lt;mnemo-context project="demo-app"&gt;\n- [fact] billing module tests\n&lt;/mnemo-context&gt;</hook_context>\n\nhow do we rate-limit the API?',
        },
        session,
      )
    for (const [agent, name] of [
      ['codex', 'UserPromptSubmit'],
      ['gemini', 'BeforeAgent'],
    ] as const) {
      const r = await hookAs(h, 'UserPromptSubmit', agent === 'gemini' ? wrapped(`${agent}-1`) : ask(`${agent}-1`), agent)
      expect(out(r).hookSpecificOutput).toMatchObject({ hookEventName: name, additionalContext: expect.stringContaining('token bucket') })
    }
    // Cursor's beforeSubmitPrompt takes no context; MNEMO_PROMPT_RECALL=off turns it off; a second ask in a session repeats nothing.
    expect((await hookAs(h, 'UserPromptSubmit', ask('cu-1'), 'cursor')).stdout).toBe('')
    expect((await hook(h, 'UserPromptSubmit', ask('off-1'), { MNEMO_PROMPT_RECALL: 'off' })).stdout).toBe('')
    expect((await hook(h, 'UserPromptSubmit', ask('c1'))).stdout).toBe('')
  })

  it('records what a block shows only once it is printed: a block that never reached the agent is shown by the next prompt', async () => {
    const h = await homeWithRateLimitDecision()
    // stdout fails (the agent closed the pipe): nothing reached the agent, so nothing is recorded as shown.
    const failingStdout = async (event: string, stdin: string) => {
      const input = new PassThrough()
      const run = runHook(event, {
        stdin: input,
        stdout: {
          write: () => {
            throw new Error('write EPIPE')
          },
        },
        env: { MNEMO_HOME: h, HOME: h },
        cwd: '/work/demo-app',
        exit: () => {},
      })
      input.end(stdin)
      await run
    }
    const ask = hookPayload('UserPromptSubmit', { prompt: 'how do we rate-limit the API?' }, 'p1')
    await failingStdout('UserPromptSubmit', ask)
    expect((await hook(h, 'UserPromptSubmit', ask)).stdout).toContain('token bucket')
    // Printed once, it is not repeated.
    expect(
      (await hook(h, 'UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'and how do we rate-limit the API now?' }, 'p1')))
        .stdout,
    ).toBe('')
    // The same for the SessionStart block: its items stay free for the session's prompts when it was not printed.
    await failingStdout('SessionStart', hookPayload('SessionStart', { source: 'startup' }, 's1'))
    expect(
      (await hook(h, 'UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'how do we rate-limit the API?' }, 's1'))).stdout,
    ).toContain('token bucket')
    await hook(h, 'SessionStart', hookPayload('SessionStart', { source: 'startup' }, 's2'))
    expect(
      (await hook(h, 'UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'how do we rate-limit the API?' }, 's2'))).stdout,
    ).toBe('')
    // The failed prints are logged, never spooled: their events are stored.
    const opened = openMnemo({ env: { MNEMO_HOME: h, HOME: h } })
    expect(opened.errors.tail(10).map((e) => e.message)).toEqual(expect.arrayContaining([expect.stringContaining('could not be printed')]))
    expect(opened.spool.count()).toBe(0)
    await opened.close()
  })

  it('gives Claude Code file hints at PreToolUse, once per file per session', async () => {
    const h = home()
    const m = openMnemo({ env: { MNEMO_HOME: h, HOME: h }, cwd: '/work/demo-app' })
    await m.engine.remember('src/billing/invoice.ts keeps amounts in integer cents, never floats', {
      project: { root: '/work/demo-app', name: 'demo-app' },
      kind: 'decision',
    })
    await m.close()
    const read = hookPayload(
      'PreToolUse',
      { tool_name: 'Read', tool_use_id: 'r1', tool_input: { file_path: '/work/demo-app/src/billing/invoice.ts' } },
      's1',
    )
    const r = JSON.parse((await hook(h, 'PreToolUse', read)).stdout) as {
      hookSpecificOutput: { hookEventName: string; additionalContext: string }
    }
    expect(r.hookSpecificOutput.hookEventName).toBe('PreToolUse')
    expect(r.hookSpecificOutput.additionalContext).toContain('integer cents')
    expect((await hook(h, 'PreToolUse', read.replace('"r1"', '"r2"'))).stdout).toBe('')
    // OpenCode's plugin reads them after the tool ran (PostToolUse); its tools name the file `filePath`.
    const ocRead = hookPayload(
      'PostToolUse',
      {
        tool_name: 'read',
        tool_use_id: 'c1',
        tool_input: { filePath: '/work/demo-app/src/billing/invoice.ts' },
        tool_response: 'export …',
      },
      'oc-1',
    )
    const oc = JSON.parse((await hookAs(h, 'PostToolUse', ocRead, 'opencode')).stdout) as {
      hookSpecificOutput: { hookEventName: string; additionalContext: string }
    }
    expect(oc.hookSpecificOutput).toMatchObject({
      hookEventName: 'PostToolUse',
      additionalContext: expect.stringContaining('integer cents'),
    })
  })

  it('injects nothing at SessionStart of a project with nothing recorded yet', async () => {
    const h = home()
    expect(await hook(h, 'SessionStart', hookPayload('SessionStart', { source: 'startup' }, 'first'))).toEqual({ stdout: '', code: 0 })
  })

  it('spools the event when the store cannot be opened, logs why, and the next run drains it', async () => {
    const h = home()
    // A directory where the database file should be makes every open fail.
    mkdirSync(path.join(h, 'mnemo.db'), { recursive: true })
    const first = await hook(h, 'UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'spooled prompt' }))
    expect(first.code).toBe(0)
    expect(readdirSync(path.join(h, 'spool')).filter((f) => f.endsWith('.json'))).toHaveLength(1)
    const m = openMnemo({ env: { MNEMO_HOME: h }, dbPath: ':memory:' })
    expect(m.errors.tail(5)).toEqual([expect.objectContaining({ where: 'hook UserPromptSubmit', code: 'STORE_UNAVAILABLE' })])
    await m.close()
    rmSync(path.join(h, 'mnemo.db'), { recursive: true })
    await hook(h, 'UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'second prompt' }))
    expect(readdirSync(path.join(h, 'spool')).filter((f) => f.endsWith('.json'))).toHaveLength(0)
    expect(await counts(h)).toMatchObject({ events: 2, observations: 2 })
  })

  it('a spooled event keeps the time its hook fired, so its retry is stored at that time under the same key', async () => {
    const h = home()
    mkdirSync(path.join(h, 'mnemo.db'), { recursive: true })
    // The clock moves on while the hook waits for the store: the event is still the moment it fired.
    let t = Date.parse('2026-03-01T10:00:00.000Z')
    const input = new PassThrough()
    const run = runHook('UserPromptSubmit', {
      stdin: input,
      stdout: { write: () => true },
      env: { MNEMO_HOME: h, HOME: h },
      cwd: '/work/demo-app',
      exit: () => {},
      now: () => {
        t += 4000
        return t - 4000
      },
    })
    input.end(hookPayload('UserPromptSubmit', { prompt: 'fired at ten' }))
    await run
    const spooled = JSON.parse(
      readFileSync(path.join(h, 'spool', readdirSync(path.join(h, 'spool')).find((f) => f.endsWith('.json'))!), 'utf8'),
    ) as { spooledAt: number }
    expect(spooled.spooledAt).toBe(Date.parse('2026-03-01T10:00:00.000Z'))
    rmSync(path.join(h, 'mnemo.db'), { recursive: true })
    await hook(h, 'UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'second prompt' }))
    const m = openMnemo({ env: { MNEMO_HOME: h } })
    const rows = await m.engine.browseObservations({
      projectIds: (await m.engine.listProjects()).map((p) => p.id),
      order: 'asc',
      limit: 10,
    })
    expect(rows.find((r) => r.text === 'fired at ten')?.ts).toBe(Date.parse('2026-03-01T10:00:00.000Z'))
    await m.close()
  })

  it('a spooled event stays its user’s: drained by another user’s hook, it is stored as the first user’s', async () => {
    const h = home()
    mkdirSync(path.join(h, 'mnemo.db'), { recursive: true })
    await hook(h, 'UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'rotate the Auth0 keys' }, 'sess-alice'), {
      MNEMO_USER: 'alice',
    })
    expect(
      JSON.parse(readFileSync(path.join(h, 'spool', readdirSync(path.join(h, 'spool')).find((f) => f.endsWith('.json'))!), 'utf8')),
    ).toMatchObject({ user: 'alice' })
    rmSync(path.join(h, 'mnemo.db'), { recursive: true })
    await hook(h, 'UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'rotate the Okta keys' }, 'sess-bob'), {
      MNEMO_USER: 'bob',
    })
    expect(readdirSync(path.join(h, 'spool')).filter((f) => f.endsWith('.json'))).toEqual([])
    const m = openMnemo({ env: { MNEMO_HOME: h } })
    try {
      const as = (user: string) => m.engine.scoped({ user })
      expect((await as('alice').recall('rotate keys')).map((x) => x.snippet)).toEqual(['rotate the Auth0 keys'])
      expect((await as('bob').recall('rotate keys')).map((x) => x.snippet)).toEqual(['rotate the Okta keys'])
    } finally {
      await m.close()
    }
  })

  it('under agent isolation an unknown --agent is refused (kept aside), never filed under another agent nor given its context', async () => {
    const h = home()
    await hook(h, 'UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'claude only pelican' }, 'c1'), {
      MNEMO_AGENT_SCOPE: 'own',
    })
    const input = new PassThrough()
    let stdout = ''
    const run = runHook(
      'SessionStart',
      {
        stdin: input,
        stdout: { write: (t: string) => (stdout += t) },
        env: { MNEMO_HOME: h, HOME: h, MNEMO_AGENT_SCOPE: 'own' },
        cwd: '/work/demo-app',
        exit: () => undefined,
      },
      'unknownagent',
    )
    input.end(hookPayload('SessionStart', { source: 'startup' }, 'u1'))
    await run
    expect(stdout).toBe('')
    expect(readdirSync(path.join(h, 'spool', 'bad'))).toHaveLength(1)
    expect(await counts(h)).toMatchObject({ events: 1 })
  })

  it('a team-mode spooled event (it names its token) is never stored locally by a local drain', async () => {
    const h = home()
    new Spool(path.join(h, 'spool')).put({
      event: 'UserPromptSubmit',
      stdin: hookPayload('UserPromptSubmit', { prompt: 'bob revoked capture gorilla' }),
      cwd: '/work/demo-app',
      spooledAt: 1,
      tokenId: '0123456789abcdef',
    })
    const m = openMnemo({ env: { MNEMO_HOME: h } })
    try {
      expect(await m.drainSpool()).toMatchObject({ drained: 0 })
      expect((await m.engine.stats()).events).toBe(0)
    } finally {
      await m.close()
    }
    expect(readdirSync(path.join(h, 'spool')).filter((f) => f.endsWith('.json'))).toHaveLength(1)
  })

  it('files left for another drain do not count towards a drain’s batch: an event behind them is still stored', async () => {
    const h = home()
    const spool = new Spool(path.join(h, 'spool'))
    for (let i = 0; i < 3; i++) spool.put({ event: 'UserPromptSubmit', stdin: '{}', cwd: '/', spooledAt: i, tokenId: '0123456789abcdef' })
    spool.put({ event: 'UserPromptSubmit', stdin: '{}', cwd: '/', spooledAt: 9 })
    const stored: number[] = []
    const drained = await spool.drain(async (item) => {
      if (item.tokenId) return 'skip'
      stored.push(item.spooledAt)
      return 'stored'
    }, 2)
    expect(drained).toMatchObject({ drained: 1 })
    expect(stored).toEqual([9])
    expect(spool.list()).toHaveLength(3)
  })

  it('keeps invalid input aside (not retried) and logs the offending field', async () => {
    const h = home()
    const r = await hook(h, 'Stop', '{"cwd": "/x"}')
    expect(r.code).toBe(0)
    expect(readdirSync(path.join(h, 'spool', 'bad'))).toHaveLength(1)
    const m = openMnemo({ env: { MNEMO_HOME: h } })
    expect(m.errors.tail(1)[0]).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('session_id is missing') })
    expect((await m.engine.stats()).events).toBe(0)
    await m.close()
  })

  it('logs why stdin is not JSON without quoting it: it may be a secret', async () => {
    const h = home()
    const secret = 'ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5'
    expect((await hook(h, 'UserPromptSubmit', secret)).code).toBe(0)
    const m = openMnemo({ env: { MNEMO_HOME: h } })
    const logged = m.errors.tail(1)[0]!
    await m.close()
    expect(logged).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(/^hook UserPromptSubmit: stdin is not valid JSON \(unexpected character\)/),
    })
    expect(readFileSync(path.join(h, 'logs', 'errors.jsonl'), 'utf8')).not.toContain('ghp_aB')
  })

  it('never writes a secret given as the event name: not in the error log, the kept input or the store', async () => {
    const h = home()
    const token = 'ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5'
    for (const name of [`${token}<x>`, token]) expect((await hook(h, name, JSON.stringify({ session_id: 's', cwd: '/x' }))).code).toBe(0)
    const files = [
      path.join(h, 'logs', 'errors.jsonl'),
      ...readdirSync(path.join(h, 'spool', 'bad')).map((f) => path.join(h, 'spool', 'bad', f)),
    ]
    for (const f of files) expect(readFileSync(f, 'utf8'), f).not.toContain('ghp_aB3d')
    expect(files.length).toBe(3)
    expect((await counts(h)).events).toBe(0)
  })

  it('stores a payload over the stdin cap with its longest strings cut as the store cuts them, and logs its size and the cap', async () => {
    const h = home()
    const stdin = hookPayload('PostToolUse', {
      tool_name: 'Bash',
      tool_input: { command: 'make oversized-output' },
      tool_response: { stdout: `${'B'.repeat(1_500_000)} tail-of-output` },
    })
    expect((await hook(h, 'PostToolUse', stdin, {}, { maxStdinBytes: 1 << 20 })).code).toBe(0)
    const m = openMnemo({ env: { MNEMO_HOME: h } })
    try {
      expect(await m.engine.stats()).toMatchObject({ events: 1, observations: 1 })
      const [hit] = await m.engine.recall('oversized-output', { limit: 1 })
      expect(hit?.snippet).toContain('oversized-output')
      expect(m.errors.tail(5)).toEqual([
        expect.objectContaining({
          where: 'hook PostToolUse',
          message: `hook stdin is ${Buffer.byteLength(stdin)} bytes, over the 1048576-byte cap: 1 string(s) cut to 1000000 characters (head and tail kept) before storing`,
        }),
      ])
    } finally {
      await m.close()
    }
    expect(readdirSync(h)).not.toContain('spool')
  })

  it('spools an event holding a 20 MB string (redacting it once overflowed the regex stack) instead of losing it', async () => {
    const h = home()
    mkdirSync(path.join(h, 'mnemo.db'), { recursive: true })
    const stdin = hookPayload('PostToolUse', {
      tool_name: 'Bash',
      tool_input: { command: 'make twenty-megabytes' },
      tool_response: { stdout: 'B'.repeat(20_000_000) },
    })
    expect((await hook(h, 'PostToolUse', stdin)).code).toBe(0)
    const spooled = readdirSync(path.join(h, 'spool')).filter((f) => f.endsWith('.json'))
    expect(spooled).toHaveLength(1)
    const kept = JSON.parse(readFileSync(path.join(h, 'spool', spooled[0]!), 'utf8')) as { stdin: string }
    expect(JSON.parse(kept.stdin)).toMatchObject({ session_id: 'sess-1', tool_input: { command: 'make twenty-megabytes' } })
    rmSync(path.join(h, 'mnemo.db'), { recursive: true })
    await hook(h, 'UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'next prompt' }))
    expect(await counts(h)).toMatchObject({ events: 2, observations: 2 })
  })

  it('stores a misspelled event under the payload’s hook_event_name, so it is derived, and logs the misspelling', async () => {
    const h = home()
    const stdin = hookPayload('PostToolUse', {
      tool_name: 'Bash',
      tool_input: { command: 'make deploy-typo' },
      tool_response: { stdout: 'ok' },
    })
    expect((await hook(h, 'PostTooluse', stdin)).code).toBe(0)
    const m = openMnemo({ env: { MNEMO_HOME: h } })
    try {
      expect((await m.engine.recall('deploy-typo', { limit: 1 })).map((x) => x.snippet)).toEqual([
        expect.stringContaining('make deploy-typo'),
      ])
      expect(m.errors.tail(5)).toEqual([
        expect.objectContaining({
          where: 'hook PostTooluse',
          code: 'INVALID_INPUT',
          message: expect.stringContaining('unknown hook event "PostTooluse" for claude-code: stored as PostToolUse'),
        }),
      ])
    } finally {
      await m.close()
    }
  })

  it('answers a misspelled SessionStart stored under the payload’s name as a SessionStart: the context block is printed', async () => {
    const h = home()
    await hook(h, 'UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'migrate the ledger tables' }, 'earlier'))
    const r = await hook(h, 'SessionStrat', hookPayload('SessionStart', { source: 'startup' }, 'now'))
    expect(r.code).toBe(0)
    const out = JSON.parse(r.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } }
    expect(out.hookSpecificOutput.hookEventName).toBe('SessionStart')
    expect(out.hookSpecificOutput.additionalContext).toContain('migrate the ledger tables')
  })

  describe('when the data directory cannot take the event', () => {
    /** Runs the hook with MNEMO_HOME `mnemoHome` and HOME `userHome`; returns its exit code and what it wrote on stderr. */
    async function hookWithStderr(mnemoHome: string, userHome: string): Promise<{ code: number | undefined; stderr: string }> {
      let stderr = ''
      const r = await hook(
        mnemoHome,
        'UserPromptSubmit',
        hookPayload('UserPromptSubmit', { prompt: 'kept somewhere' }),
        { HOME: userHome },
        { stderr: { write: (t: string) => (stderr += t) } },
      )
      return { code: r.code, stderr }
    }
    const badFiles = (userHome: string) => readdirSync(path.join(userHome, '.mnemo', 'spool', 'elsewhere'))

    it('keeps it for that data directory in spool/elsewhere of the default one, says so on stderr, and stores it there once it works', async () => {
      const file = path.join(home(), 'home-file')
      writeFileSync(file, '')
      const user = home()
      const r = await hookWithStderr(file, user)
      expect(r.code).toBe(0)
      const [kept] = badFiles(user)
      const keptPath = path.join(user, '.mnemo', 'spool', 'elsewhere', kept!)
      expect(r.stderr).toBe(
        `mnemo hook UserPromptSubmit: MNEMO_HOME ${file} is not a directory (it is a file); event kept as ${keptPath} (stored in ${file} by its next command or hook once it can be written)\n`,
      )
      expect(JSON.parse(readFileSync(keptPath, 'utf8'))).toMatchObject({
        event: 'UserPromptSubmit',
        stdin: expect.stringContaining('kept somewhere'),
        home: file,
      })
      const log = openMnemo({ env: { MNEMO_HOME: path.join(user, '.mnemo') }, dbPath: ':memory:' })
      expect(log.errors.tail(5)).toEqual([
        expect.objectContaining({ code: 'STORE_UNAVAILABLE', message: expect.stringContaining(`event kept as ${keptPath}`) }),
      ])
      await log.close()
      // Fixed (as when a full disk gets space again): the data directory's next drain takes the event back and stores it.
      rmSync(file)
      const fixed = openMnemo({ env: { MNEMO_HOME: file, HOME: user } })
      try {
        expect(await fixed.drainSpool()).toMatchObject({ drained: 1, remaining: 0 })
        expect(await fixed.engine.stats()).toMatchObject({ observations: 1 })
      } finally {
        await fixed.close()
      }
      expect(badFiles(user)).toEqual([])
    })

    it.runIf(CAN_MAKE_UNWRITABLE)('does the same when MNEMO_HOME is not writable, naming that', async () => {
      const mnemoHome = home()
      await hook(mnemoHome, 'UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'first' }))
      const restore = makeUnwritable(mnemoHome)!
      try {
        const user = home()
        const r = await hookWithStderr(mnemoHome, user)
        expect(r.code).toBe(0)
        expect(r.stderr).toMatch(
          new RegExp(
            `^mnemo hook UserPromptSubmit: MNEMO_HOME ${mnemoHome} is not writable \\(permission denied\\); event kept as ${user}/\\.mnemo/spool/elsewhere/[^ ]+\\.json \\(stored in ${mnemoHome} by its next command or hook once it can be written\\)\\n$`,
          ),
        )
        expect(badFiles(user)).toHaveLength(1)
      } finally {
        restore()
      }
    })

    it.runIf(existsSync('/proc/self'))(
      'returns (exit 0) when MNEMO_HOME is below /proc, naming it, with the event kept in the default spool/elsewhere',
      async () => {
        const user = home()
        const r = await hookWithStderr('/proc/nope', user)
        expect(r.code).toBe(0)
        expect(r.stderr).toMatch(
          /^mnemo hook UserPromptSubmit: MNEMO_HOME \/proc\/nope cannot be created: mkdir \/proc\/nope failed with ENOENT though \/proc exists/,
        )
        expect(badFiles(user)).toHaveLength(1)
      },
    )

    it('says the event was lost when the default data directory cannot keep it either', async () => {
      const file = path.join(home(), 'home-file')
      writeFileSync(file, '')
      // HOME is a file too: ~/.mnemo cannot exist.
      const r = await hookWithStderr(path.join(file, '.mnemo'), file)
      expect(r.code).toBe(0)
      expect(r.stderr).toBe(
        `mnemo hook UserPromptSubmit: MNEMO_HOME ${path.join(file, '.mnemo')} is not a directory (${file} is a file); the event was lost (no data directory could keep it)\n`,
      )
    })
  })

  it('gives up within the deadline when stdin never closes, exiting 0', async () => {
    vi.useFakeTimers()
    const h = home()
    const input = new PassThrough()
    let code: number | undefined
    const run = runHook('Notification', {
      stdin: input,
      stdout: { write: () => true },
      env: { MNEMO_HOME: h },
      cwd: '/x',
      exit: (c) => (code = c),
    })
    input.write('{"session_id": "s", "message": "partial')
    await vi.advanceTimersByTimeAsync(HOOK_DEADLINE_MS)
    await run
    expect(code).toBe(0)
    vi.useRealTimers()
    const m = openMnemo({ env: { MNEMO_HOME: h }, dbPath: ':memory:' })
    expect(m.errors.tail(1)[0]).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining('stdin was not closed within 1000 ms'),
    })
    await m.close()
    // What did arrive is kept for inspection, not dropped.
    const kept = readdirSync(path.join(h, 'spool', 'bad'))
    expect(kept).toHaveLength(1)
    expect(JSON.parse(readFileSync(path.join(h, 'spool', 'bad', kept[0]!), 'utf8'))).toMatchObject({
      event: 'Notification',
      stdin: '{"session_id": "s", "message": "partial',
    })
  })
})

describe('mnemo hook --agent', () => {
  it('stores the event of an unknown agent as Claude Code, and logs that the command line needs fixing', async () => {
    const h = home()
    const input = new PassThrough()
    let code: number | undefined
    const run = runHook(
      'UserPromptSubmit',
      { stdin: input, stdout: { write: () => true }, env: { MNEMO_HOME: h, HOME: h }, cwd: '/work/demo-app', exit: (c) => (code = c) },
      'bogus',
    )
    input.end(hookPayload('UserPromptSubmit', { prompt: 'agent typo' }))
    await run
    expect(code).toBe(0)
    expect(await counts(h)).toMatchObject({ events: 1, observations: 1 })
    const logged = readFileSync(path.join(h, 'logs', 'errors.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { message: string })
    expect(logged.map((e) => e.message)).toEqual([
      'unknown --agent "bogus" (one of claude-code, codex, gemini, cursor, opencode); read as claude-code',
    ])
  })
})

describe('mnemo hook in team mode (MNEMO_SERVER_URL)', () => {
  /** Runs the hook against `url` with `token`; the client's own data directory is `client`. */
  async function remoteHook(
    client: string,
    url: string,
    token: string,
    event: string,
    stdin: string,
    base = `${url}/`,
    remoteBudgetMs = { capture: 1500, context: 1500 },
    now?: () => number,
  ): Promise<{ stdout: string; code: number | undefined }> {
    const input = new PassThrough()
    let stdout = ''
    let code: number | undefined
    const run = runHook(event, {
      // Room for a loaded test machine: these tests are about what is sent, not how fast (see the budget tests below).
      remoteBudgetMs,
      ...(now ? { now } : {}),
      stdin: input,
      stdout: { write: (t: string) => (stdout += t) },
      env: { MNEMO_HOME: client, HOME: client, MNEMO_SERVER_URL: base, MNEMO_SERVER_TOKEN: token },
      cwd: '/work/demo-app',
      exit: (c) => {
        code = c
      },
    })
    input.end(stdin)
    await run
    return { stdout, code }
  }
  const spooled = (client: string) => readdirSync(path.join(client, 'spool')).filter((f) => f.endsWith('.json'))

  describe('a server that accepts connections and never answers', () => {
    /** A loopback TCP server that accepts and never writes a byte; counts connections. */
    async function silentServer(): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
      const net = await import('node:net')
      let n = 0
      const sockets = new Set<import('node:net').Socket>()
      const server = net.createServer((socket) => {
        n++
        sockets.add(socket)
        socket.on('error', () => undefined)
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const { port } = server.address() as import('node:net').AddressInfo
      return {
        url: `http://127.0.0.1:${port}`,
        connections: () => n,
        close: () =>
          new Promise<void>((resolve) => {
            for (const s of sockets) s.destroy()
            server.close(() => resolve())
          }),
      }
    }

    it('spools within the event’s budget, then later hooks spool without trying it for a while (no second wait)', async () => {
      const silent = await silentServer()
      const client = home()
      try {
        const budget = { capture: 60, context: 60 }
        const post = await remoteHook(
          client,
          silent.url,
          'tok',
          'PostToolUse',
          hookPayload('PostToolUse', { tool_name: 'Bash', tool_input: { command: 'npm test' }, tool_response: { stdout: 'ok' } }),
          `${silent.url}/`,
          budget,
        )
        expect(post).toEqual({ stdout: '', code: 0 })
        // The server side sees the accept on its own turn of the event loop.
        await vi.waitFor(() => expect(silent.connections()).toBe(1))
        expect(spooled(client)).toHaveLength(1)
        const log = readFileSync(path.join(client, 'logs', 'errors.jsonl'), 'utf8')
        expect(log).toContain(`server ${silent.url} unreachable`)
        // Ten sessions starting together now spool at once: none opens a connection, none waits out a budget.
        const starts = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            remoteHook(
              client,
              silent.url,
              'tok',
              'SessionStart',
              hookPayload('SessionStart', { source: 'startup' }, `s${i}`),
              `${silent.url}/`,
              budget,
            ),
          ),
        )
        expect(starts.every((r) => r.code === 0 && r.stdout === '')).toBe(true)
        expect(silent.connections()).toBe(1)
        expect(spooled(client)).toHaveLength(11)
        expect(readFileSync(path.join(client, 'logs', 'errors.jsonl'), 'utf8')).toContain('spooled without trying for 30 s')
        // After the back-off the next hook tries the server again.
        const later = Date.now() + 31_000
        await remoteHook(client, silent.url, 'tok', 'Stop', hookPayload('Stop', {}), `${silent.url}/`, budget, () => later)
        // (the HTTP client may open more than one connection for its one request)
        await vi.waitFor(() => expect(silent.connections()).toBeGreaterThan(1))
      } finally {
        await silent.close()
      }
    })

    it('sends what it spooled as soon as MNEMO_SERVER_URL names a server that answers', async () => {
      const { startServer } = await import('../http/server.js')
      const silent = await silentServer()
      const client = home()
      const server = await startServer({ home: home(), host: '127.0.0.1', port: 0, env: {}, consolidateEveryMinutes: 0 })
      try {
        await remoteHook(
          client,
          silent.url,
          server.token,
          'UserPromptSubmit',
          hookPayload('UserPromptSubmit', { prompt: 'kept while the server hangs' }),
          `${silent.url}/`,
          { capture: 60, context: 60 },
        )
        expect(spooled(client)).toHaveLength(1)
        await remoteHook(client, server.url, server.token, 'Stop', hookPayload('Stop', {}))
        expect(spooled(client)).toHaveLength(0)
        expect(JSON.stringify(await server.engine.recall('kept while the server hangs'))).toContain('kept while the server hangs')
      } finally {
        await server.close()
        await silent.close()
      }
    })
  })

  it('a misspelled event posted to the server is stored under the payload’s hook_event_name and logged by the server', async () => {
    const { startServer } = await import('../http/server.js')
    const serverHome = home()
    const server = await startServer({ home: serverHome, host: '127.0.0.1', port: 0, env: {}, consolidateEveryMinutes: 0 })
    try {
      const payload = {
        session_id: 't',
        cwd: '/nonexistent/typo',
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'make deploy-typo' },
        tool_response: { stdout: 'ok' },
      }
      const res = await fetch(`${server.url}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ event: 'PostTooluse', payload }),
      })
      expect(res.status).toBe(202)
      expect((await server.engine.recall('deploy-typo', { limit: 1 })).map((x) => x.snippet)).toEqual([
        expect.stringContaining('make deploy-typo'),
      ])
      const log = openMnemo({ env: { MNEMO_HOME: serverHome }, dbPath: ':memory:' })
      expect(log.errors.tail(5)).toEqual([
        expect.objectContaining({ where: 'http POST /v1/events', message: expect.stringContaining('stored as PostToolUse') }),
      ])
      await log.close()
    } finally {
      await server.close()
    }
  })

  it('files an event from a subfolder under the repository the client resolved, which the server cannot see', async () => {
    const { startServer } = await import('../http/server.js')
    const client = home()
    const repo = path.join(home(), 'shop')
    mkdirSync(path.join(repo, '.git'), { recursive: true })
    mkdirSync(path.join(repo, 'src', 'api'), { recursive: true })
    const server = await startServer({ home: home(), host: '127.0.0.1', port: 0, env: {}, consolidateEveryMinutes: 0 })
    try {
      const payload = hookPayload('UserPromptSubmit', { prompt: 'split the orders router' }, 'sub', path.join(repo, 'src', 'api'))
      expect((await remoteHook(client, server.url, server.token, 'UserPromptSubmit', payload)).code).toBe(0)
      expect((await server.engine.listProjects()).map((p) => p.root)).toEqual([repo])
      // The server checks what it is told: a root must be absolute and hold the event's cwd.
      const post = (body: unknown) =>
        fetch(`${server.url}/v1/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      const outside = await post({ event: 'UserPromptSubmit', payload: JSON.parse(payload), projectRoot: '/elsewhere' })
      expect([outside.status, ((await outside.json()) as { error: { message: string } }).error.message]).toEqual([
        400,
        `projectRoot "/elsewhere" does not contain the event's cwd "${path.join(repo, 'src', 'api')}"`,
      ])
      expect((await post({ event: 'UserPromptSubmit', payload: JSON.parse(payload), projectRoot: 'shop' })).status).toBe(400)
      // A folder the server does not have: without the client's root it could only file the event under the subfolder.
      const remote = { session_id: 'far', cwd: '/nonexistent/team/src/api', hook_event_name: 'UserPromptSubmit', prompt: 'far away' }
      expect((await post({ event: 'UserPromptSubmit', payload: remote, projectRoot: '/nonexistent/team' })).status).toBe(202)
      expect((await post({ event: 'UserPromptSubmit', payload: { ...remote, session_id: 'far2' } })).status).toBe(202)
      expect((await server.engine.listProjects()).map((p) => p.root).sort()).toEqual(
        ['/nonexistent/team', '/nonexistent/team/src/api', repo].sort(),
      )
    } finally {
      await server.close()
    }
  })

  it('stores on the server, spools while it is down, drains on the next hook without duplicates', async () => {
    const { startServer } = await import('../http/server.js')
    const serverHome = home()
    const client = home()
    let server = await startServer({ home: serverHome, host: '127.0.0.1', port: 0, env: {} })
    let firedAt = 0
    try {
      const prompt = hookPayload('UserPromptSubmit', { prompt: 'add caching to the orders endpoint' }, 'earlier')
      expect(await remoteHook(client, server.url, server.token, 'UserPromptSubmit', prompt)).toEqual({ stdout: '', code: 0 })
      const start = await remoteHook(
        client,
        server.url,
        server.token,
        'SessionStart',
        hookPayload('SessionStart', { source: 'startup' }, 'now'),
      )
      expect(start.code).toBe(0)
      const context = JSON.parse(start.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } }
      expect(context.hookSpecificOutput.hookEventName).toBe('SessionStart')
      expect(context.hookSpecificOutput.additionalContext).toContain('orders endpoint')
      // What `mnemo status` reports about the server.
      expect(await checkRemote({ url: server.url, token: server.token })).toEqual({
        url: server.url,
        ok: true,
        detail: 'reachable, token accepted',
      })
      expect((await checkRemote({ url: server.url, token: 'wrong' })).detail).toMatch(/^token refused \(401\)/)
      expect((await checkRemote({ url: `${server.url}/v1`, token: server.token })).detail).toBe(
        'no mnemo API at this URL (give the base URL, without /v1)',
      )
      // Nothing is stored on the client.
      expect(readdirSync(client).filter((f) => f.endsWith('.db'))).toEqual([])

      const url = server.url
      await server.close()
      const down = await remoteHook(
        client,
        url,
        server.token,
        'PostToolUse',
        hookPayload('PostToolUse', { tool_name: 'Bash', tool_input: { command: 'npm test' }, tool_response: { stdout: 'ok' } }, 'now'),
      )
      expect(down).toEqual({ stdout: '', code: 0 })
      expect(spooled(client)).toHaveLength(1)
      // A wrong token is not the event's fault: it is spooled too, never dropped.
      const bad = await remoteHook(
        client,
        url,
        'wrong-token',
        'UserPromptSubmit',
        hookPayload('UserPromptSubmit', { prompt: 'second prompt while offline' }, 'now'),
      )
      expect(bad.code).toBe(0)
      expect(spooled(client)).toHaveLength(2)

      firedAt = (JSON.parse(readFileSync(path.join(client, 'spool', spooled(client)[0]!), 'utf8')) as { spooledAt: number }).spooledAt
      server = await startServer({ home: serverHome, host: '127.0.0.1', port: 0, env: {} })
      // A URL with a path is a setting to fix, not bad input: spooled, with a message that says so.
      await remoteHook(client, server.url, server.token, 'Stop', hookPayload('Stop', {}, 'now'), `${server.url}/v1`)
      expect(spooled(client)).toHaveLength(3)
      expect(readFileSync(path.join(client, 'logs', 'errors.jsonl'), 'utf8')).toContain('without /v1')
      // An invalid URL too.
      await remoteHook(client, server.url, server.token, 'Stop', hookPayload('Stop', {}, 'now'), 'notaurl')
      expect(spooled(client)).toHaveLength(4)
      expect(readFileSync(path.join(client, 'logs', 'errors.jsonl'), 'utf8')).toContain('MNEMO_SERVER_URL is not an http(s) URL')
      await remoteHook(
        client,
        server.url,
        server.token,
        'UserPromptSubmit',
        hookPayload('UserPromptSubmit', { prompt: 'third prompt, back online' }, 'now'),
      )
      // The event spooled for the wrong token (the server was down, so it was never refused) waits for a hook with that token:
      // the spool of a shared data directory never sends one identity's events with another's token.
      expect(spooled(client)).toHaveLength(1)
      expect(JSON.parse(readFileSync(path.join(client, 'spool', spooled(client)[0]!), 'utf8'))).toMatchObject({
        stdin: expect.stringContaining('second prompt while offline'),
        tokenId: expect.stringMatching(/^[0-9a-f]{16}$/),
      })
      // Refused now, it still is never sent with another token (a revoked member's captures never become another's):
      // it waits, counted as pending, until that token works again.
      await remoteHook(client, server.url, 'wrong-token', 'Stop', hookPayload('Stop', {}, 'now'))
      await remoteHook(client, server.url, server.token, 'Stop', hookPayload('Stop', {}, 'now'))
      expect(spooled(client)).toHaveLength(2)
      expect(
        (await server.engine.recall('second prompt while offline', { limit: 100 })).some((h) =>
          h.snippet.includes('second prompt while offline'),
        ),
      ).toBe(false)
      for (const f of spooled(client)) rmSync(path.join(client, 'spool', f))
      // The first prompt again (an agent retry): the server's idempotency key keeps one copy.
      await remoteHook(client, server.url, server.token, 'UserPromptSubmit', prompt)
    } finally {
      await server.close()
    }
    const stats = await counts(serverHome)
    expect(stats.events).toBe(5) // the Stop events carry the same payload: one event; the wrong token's prompt never arrives
    // A spooled event keeps the time it fired, not the time it was delivered.
    const m = openMnemo({ env: { MNEMO_HOME: serverHome } })
    try {
      const [hit] = await m.engine.recall('npm test', { limit: 1 })
      expect(hit!.ts).toBe(firedAt)
    } finally {
      await m.close()
    }
  })

  it('sends a 12 MB tool output capped as the store would cap it, instead of losing it to the body limit', async () => {
    const { startServer } = await import('../http/server.js')
    const serverHome = home()
    const client = home()
    const server = await startServer({ home: serverHome, host: '127.0.0.1', port: 0, env: {} })
    try {
      const big = hookPayload('PostToolUse', {
        tool_name: 'Bash',
        tool_use_id: 'b1',
        tool_input: { command: 'cat big.log' },
        tool_response: { stdout: `start ${'A'.repeat(12 * 1024 * 1024)} end` },
      })
      expect(await remoteHook(client, server.url, server.token, 'PostToolUse', big)).toEqual({ stdout: '', code: 0 })
    } finally {
      await server.close()
    }
    expect((await counts(serverHome)).events).toBe(1)
    expect(readdirSync(path.join(client)).includes('spool') ? spooled(client) : []).toEqual([])
  })

  it('keeps an event the server refuses as bad input aside, and a payload without cwd gets the hook cwd', async () => {
    const { startServer } = await import('../http/server.js')
    const serverHome = home()
    const client = home()
    const server = await startServer({ home: serverHome, host: '127.0.0.1', port: 0, env: {} })
    try {
      await remoteHook(
        client,
        server.url,
        server.token,
        'UserPromptSubmit',
        JSON.stringify({ session_id: 's', cwd: 'relative/dir', prompt: 'x' }),
      )
      expect(readdirSync(path.join(client, 'spool', 'bad'))).toHaveLength(1)
      await remoteHook(
        client,
        server.url,
        server.token,
        'UserPromptSubmit',
        JSON.stringify({ session_id: 's2', prompt: 'no cwd in this payload' }),
      )
    } finally {
      await server.close()
    }
    const m = openMnemo({ env: { MNEMO_HOME: serverHome } })
    try {
      expect((await m.engine.stats()).events).toBe(1)
      expect((await m.engine.sessions({})).map((s) => s.sessionKey)).toContain('s2')
    } finally {
      await m.close()
    }
  })
})
