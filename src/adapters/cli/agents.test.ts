import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestEngine, tempDir } from '../../testing/test-mnemo.js'
import { runCli } from './program.js'
import type { ParsedJson } from '../../testing/json.js'

const cleanups: (() => void)[] = []
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()!()
})

function sandbox() {
  const t = tempDir()
  cleanups.push(t.cleanup)
  const home = path.join(t.dir, 'home')
  mkdirSync(home)
  let stdout = ''
  let stderr = ''
  const io = {
    stdout: (s: string) => (stdout += s),
    stderr: (s: string) => (stderr += s),
    env: { HOME: home, MNEMO_HOME: path.join(t.dir, 'mnemo') },
    cwd: t.dir,
  }
  return { home, io, out: () => ({ stdout, stderr }) }
}

describe('connect --all and doctor', () => {
  it('connects every agent, is idempotent, and doctor then reports them ok', async () => {
    const s = sandbox()
    expect(await runCli(['connect', '--all'], s.io)).toBe(0)
    expect(readFileSync(path.join(s.home, '.claude/settings.json'), 'utf8')).toContain('hook SessionStart')
    expect(readFileSync(path.join(s.home, '.codex/config.toml'), 'utf8')).toContain('[mcp_servers.mnemo]')
    expect(readFileSync(path.join(s.home, '.gemini/settings.json'), 'utf8')).toContain('"mnemo"')
    expect(readFileSync(path.join(s.home, '.cursor/mcp.json'), 'utf8')).toContain('"mnemo"')
    expect(readFileSync(path.join(s.home, '.config/opencode/opencode.json'), 'utf8')).toContain('"mnemo"')
    const before = s.out().stdout.length
    expect(await runCli(['connect', '--all', '--json'], s.io)).toBe(0)
    const doc = JSON.parse(s.out().stdout.slice(before)) as { agents: { agent: string; written: string[] }[] }
    expect(doc.agents.map((a) => [a.agent, a.written])).toEqual([
      ['claude-code', []],
      ['codex', []],
      ['gemini', []],
      ['cursor', []],
      ['opencode', []],
    ])
    const atDoctor = s.out().stdout.length
    expect(await runCli(['doctor', '--json'], s.io)).toBe(0)
    const report = JSON.parse(s.out().stdout.slice(atDoctor)) as { agents: { agent: string; scope: string; status: string }[] }
    // At user scope connect records Codex's trust in the hooks it wrote, so Codex is ok at once.
    expect(report.agents.filter((a) => a.scope === 'user').map((a) => [a.agent, a.status])).toEqual([
      ['claude-code', 'ok'],
      ['codex', 'ok'],
      ['gemini', 'ok'],
      ['cursor', 'ok'],
      ['opencode', 'ok'],
    ])
  })

  it('--scope project warns that the files hold this machine’s paths, and refuses a second registration in the other scope', async () => {
    const s = sandbox()
    mkdirSync(path.join(s.io.cwd, '.git'))
    expect(await runCli(['connect', 'claude-code', '--scope', 'project'], s.io)).toBe(0)
    const { stderr } = s.out()
    expect(stderr).toContain(
      `warning: ${path.join(s.io.cwd, '.claude/settings.json')} and ${path.join(s.io.cwd, '.mcp.json')} now hold this machine's absolute paths (node, the mnemo CLI `,
    )
    expect(stderr).toContain('Do not commit them (add them to .gitignore)')
    // The user scope too would make Claude Code run every hook twice: refused, naming the other scope and the fix.
    const before = s.out().stderr.length
    expect(await runCli(['connect', 'claude-code'], s.io)).toBe(2)
    expect(s.out().stderr.slice(before)).toContain(
      `mnemo's hooks for claude-code are already registered in the project scope of ${s.io.cwd}; connecting the user scope too would run every hook twice\nhint: keep that one, or run mnemo disconnect claude-code --scope project first`,
    )
    expect(existsSync(path.join(s.home, '.claude/settings.json'))).toBe(false)
    // So doctor does not suggest it: the user scope has nothing to do.
    const atDoctor = s.out().stdout.length
    expect(await runCli(['doctor'], s.io)).toBe(0)
    expect(s.out().stdout.slice(atDoctor)).toContain(
      `ok       claude-code (user): not connected here; mnemo's hooks are registered in the project scope of ${s.io.cwd}, which the agent runs\n         fix: nothing to do\n`,
    )
  })

  it('--home wins over MNEMO_HOME: the hooks and the MCP entry get it, made absolute, and doctor --home checks against it', async () => {
    const s = sandbox()
    const home = path.join(s.io.cwd, 'other-home')
    expect(await runCli(['connect', 'claude-code', '--home', 'other-home'], s.io)).toBe(0)
    const settings = JSON.parse(readFileSync(path.join(s.home, '.claude/settings.json'), 'utf8')) as ParsedJson
    const mcp = JSON.parse(readFileSync(path.join(s.home, '.claude.json'), 'utf8')) as ParsedJson
    expect(settings.hooks.SessionStart[0].hooks[0].command).toMatch(new RegExp(`^MNEMO_HOME="${home}" `))
    expect(JSON.stringify(settings)).not.toContain(s.io.env.MNEMO_HOME)
    expect(mcp.mcpServers.mnemo.env.MNEMO_HOME).toBe(home)
    const doctor = async (args: string[]) => {
      const before = s.out().stdout.length
      await runCli(['doctor', '--json', ...args], s.io)
      const r = JSON.parse(s.out().stdout.slice(before)) as { agents: { agent: string; scope: string; status: string; detail: string }[] }
      return r.agents.find((a) => a.agent === 'claude-code' && a.scope === 'user')!
    }
    expect((await doctor(['--home', home])).status).toBe('ok')
    // Without --home, doctor checks against the environment's MNEMO_HOME, which the entries do not carry.
    expect(await doctor([])).toMatchObject({ status: 'stale', detail: expect.stringContaining(`expected ${s.io.env.MNEMO_HOME}`) })
  })

  it('--node refuses a path that does not exist or is not an executable file, and writes nothing', async () => {
    const s = sandbox()
    const notExecutable = path.join(s.io.cwd, 'passwd')
    writeFileSync(notExecutable, 'root:x:0:0::/root:/bin/sh\n', { mode: 0o644 })
    const missing = path.join(s.io.cwd, 'nonexistent', 'node')
    for (const [node, message] of [
      [missing, `--node ${missing} does not exist`],
      [notExecutable, `--node ${notExecutable} is not an executable file`],
      [s.io.cwd, `--node ${s.io.cwd} is not an executable file`],
    ]) {
      const before = s.out().stderr.length
      expect(await runCli(['connect', 'claude-code', '--node', node!], s.io)).toBe(2)
      expect(s.out().stderr.slice(before)).toContain(message)
      expect(await runCli(['connect', '--all', '--node', node!], s.io)).toBe(2)
    }
    expect(existsSync(path.join(s.home, '.claude/settings.json'))).toBe(false)
    expect(existsSync(path.join(s.home, '.claude.json'))).toBe(false)
    expect(existsSync(path.join(s.home, '.codex'))).toBe(false)
    // The node running this test is accepted.
    expect(await runCli(['connect', 'claude-code', '--node', process.execPath], s.io)).toBe(0)
  })

  it('disconnect claude-code deletes the files it left as {}, so doctor no longer lists the project scope', async () => {
    const s = sandbox()
    mkdirSync(path.join(s.io.cwd, '.git'))
    expect(await runCli(['connect', 'claude-code'], s.io)).toBe(0)
    expect(await runCli(['disconnect', 'claude-code'], s.io)).toBe(0)
    expect(existsSync(path.join(s.home, '.claude/settings.json'))).toBe(false)
    expect(existsSync(path.join(s.home, '.claude.json'))).toBe(false)
    expect(await runCli(['connect', 'claude-code', '--scope', 'project'], s.io)).toBe(0)
    expect(await runCli(['disconnect', 'claude-code', '--scope', 'project'], s.io)).toBe(0)
    expect(existsSync(path.join(s.io.cwd, '.claude/settings.json'))).toBe(false)
    expect(existsSync(path.join(s.io.cwd, '.mcp.json'))).toBe(false)
    const before = s.out().stdout.length
    expect(await runCli(['doctor', '--json'], s.io)).toBe(0)
    const report = JSON.parse(s.out().stdout.slice(before)) as { agents: { agent: string; scope: string }[] }
    expect(report.agents.filter((a) => a.agent === 'claude-code').map((a) => a.scope)).toEqual(['user'])
  })

  it('doctor reports hooks registered in both scopes as broken (every event captured twice), not ok', async () => {
    const s = sandbox()
    mkdirSync(path.join(s.io.cwd, '.git'))
    expect(await runCli(['connect', 'claude-code'], s.io)).toBe(0)
    // Written by hand, or by an older mnemo that did not refuse it.
    mkdirSync(path.join(s.io.cwd, '.claude'))
    writeFileSync(path.join(s.io.cwd, '.claude/settings.json'), readFileSync(path.join(s.home, '.claude/settings.json'), 'utf8'))
    const before = s.out().stdout.length
    expect(await runCli(['doctor', '--json'], s.io)).toBe(1)
    const report = JSON.parse(s.out().stdout.slice(before)) as {
      agents: { agent: string; scope: string; status: string; detail: string; fix: string }[]
    }
    expect(report.agents.find((a) => a.agent === 'claude-code' && a.scope === 'project')).toMatchObject({
      status: 'broken',
      detail: expect.stringContaining('every event is captured twice'),
      fix: 'mnemo disconnect claude-code --scope project (or --scope user: keep one)',
    })
  })

  it('--scope project writes to the repository’s top level when run from a subfolder, and doctor checks it there', async () => {
    const s = sandbox()
    mkdirSync(path.join(s.io.cwd, '.git'))
    const sub = path.join(s.io.cwd, 'src', 'billing')
    mkdirSync(sub, { recursive: true })
    const io = { ...s.io, cwd: sub }
    expect(await runCli(['connect', 'claude-code', '--scope', 'project'], io)).toBe(0)
    expect(await runCli(['connect', 'cursor', '--scope', 'project'], io)).toBe(0)
    expect(readFileSync(path.join(s.io.cwd, '.claude/settings.json'), 'utf8')).toContain('hook SessionStart')
    expect(existsSync(path.join(s.io.cwd, '.cursor/mcp.json'))).toBe(true)
    expect(existsSync(path.join(sub, '.claude'))).toBe(false)
    const before = s.out().stdout.length
    await runCli(['doctor', '--json'], io)
    const report = JSON.parse(s.out().stdout.slice(before)) as { agents: { agent: string; scope: string; status: string }[] }
    expect(report.agents.filter((a) => a.scope === 'project' && ['claude-code', 'cursor'].includes(a.agent)).map((a) => a.status)).toEqual([
      'ok',
      'ok',
    ])
  })

  it('status and doctor say when the stored rows were derived by an older mnemo, until a rebuild', async () => {
    const s = sandbox()
    expect(await runCli(['remember', 'rows derived before an upgrade'], s.io)).toBe(0)
    const json = async (argv: string[]): Promise<ParsedJson> => {
      const before = s.out().stdout.length
      await runCli([...argv, '--json'], s.io)
      return JSON.parse(s.out().stdout.slice(before))
    }
    expect((await json(['status'])).derivation.stale).toBe(false)
    // What an upgrade finds: rows made by derivation 1.
    const db = new Database(path.join(s.io.env.MNEMO_HOME, 'mnemo.db'))
    db.prepare("UPDATE store_meta SET value = '1' WHERE key = 'derived_with'").run()
    db.close()
    expect((await json(['status'])).derivation).toMatchObject({ derivedWith: 1, stale: true })
    const before = s.out().stdout.length
    await runCli(['status'], s.io)
    expect(s.out().stdout.slice(before)).toMatch(
      /derived rows {4}made by an older mnemo \(derivation 1; this one makes \d+\): run mnemo rebuild/,
    )
    expect((await json(['doctor'])).store.find((c: { check: string }) => c.check === 'derived rows')).toMatchObject({
      status: 'stale',
      fix: expect.stringContaining('mnemo rebuild'),
    })
    expect(await runCli(['rebuild'], s.io)).toBe(0)
    expect((await json(['status'])).derivation.stale).toBe(false)
    expect((await json(['doctor'])).store.find((c: { check: string }) => c.check === 'derived rows').status).toBe('ok')
    // A value that is no version is read as the oldest (a rebuild is offered); a newer one is named as such.
    const set = (value: string) => {
      const db = new Database(path.join(s.io.env.MNEMO_HOME, 'mnemo.db'))
      db.prepare("UPDATE store_meta SET value = ? WHERE key = 'derived_with'").run(value)
      db.close()
    }
    set('abc')
    expect((await json(['status'])).derivation).toMatchObject({ derivedWith: 1, stale: true })
    set('99')
    expect((await json(['doctor'])).store.find((c: { check: string }) => c.check === 'derived rows')).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/^derivation 99 \(made by a newer mnemo; this one makes \d+\)$/),
    })
  })

  it('doctor names what is missing and how to fix it, as one JSON document', async () => {
    const s = sandbox()
    expect(await runCli(['doctor', '--json'], s.io)).toBe(0)
    const doc = JSON.parse(s.out().stdout) as {
      ok: boolean
      agents: { agent: string; status: string; fix: string }[]
      store: { check: string; status: string }[]
    }
    expect(doc.ok).toBe(true)
    expect(doc.agents.find((a) => a.agent === 'cursor')).toMatchObject({
      status: 'missing',
      fix: expect.stringContaining('mnemo connect cursor'),
    })
    expect(doc.store.map((x) => [x.check, x.status])).toEqual([
      ['data directory', 'ok'],
      ['database', 'ok'],
      ['derived rows', 'ok'],
      ['spool', 'ok'],
      ['recent errors', 'ok'],
    ])
  })

  it('doctor checks the team server when MNEMO_SERVER_URL is set, and says how to fix it', async () => {
    const s = sandbox()
    const { startServer } = await import('../http/server.js')
    const t = tempDir()
    cleanups.push(t.cleanup)
    const server = await startServer({ home: t.dir, host: '127.0.0.1', port: 0, env: {} })
    try {
      const run = async (env: Record<string, string>) => {
        const at = s.out().stdout.length
        const code = await runCli(['doctor', '--json'], { ...s.io, env: { ...s.io.env, ...env } })
        return {
          code,
          doc: JSON.parse(s.out().stdout.slice(at)) as { store: { check: string; status: string; detail: string; fix: string }[] },
        }
      }
      const good = await run({ MNEMO_SERVER_URL: server.url, MNEMO_SERVER_TOKEN: server.token })
      expect(good.code).toBe(0)
      expect(good.doc.store[0]).toMatchObject({ check: 'team server', status: 'ok', detail: `${server.url}: reachable, token accepted` })
      const badToken = await run({ MNEMO_SERVER_URL: server.url, MNEMO_SERVER_TOKEN: 'nope' })
      expect(badToken.code).toBe(1)
      expect(badToken.doc.store[0]).toMatchObject({
        check: 'team server',
        status: 'broken',
        fix: expect.stringContaining('MNEMO_SERVER_TOKEN'),
      })

      // remember goes to the server too, for the project of the working directory.
      const clientHome = path.join(s.home, 'client-mnemo')
      const team = { ...s.io, env: { ...s.io.env, MNEMO_HOME: clientHome, MNEMO_SERVER_URL: server.url, MNEMO_SERVER_TOKEN: server.token } }
      const at = s.out().stdout.length
      expect(await runCli(['remember', 'deploys need the VPN', '--kind', 'lesson', '--json'], team)).toBe(0)
      expect(JSON.parse(s.out().stdout.slice(at))).toMatchObject({
        created: true,
        memory: { kind: 'lesson', text: 'deploys need the VPN', project: path.basename(s.io.cwd) },
      })
      expect(existsSync(clientHome)).toBe(false) // nothing stored on the client
      expect(await runCli(['remember', 'x', '--supersedes', 'mem_1'], team)).toBe(2)
    } finally {
      await server.close()
    }
    const offline = { ...s.io, env: { ...s.io.env, MNEMO_SERVER_URL: server.url, MNEMO_SERVER_TOKEN: server.token } }
    expect(await runCli(['remember', 'while the server is down'], offline)).toBe(1)
    expect(s.out().stderr).toContain('unreachable')
    const { openMnemo } = await import('../../runtime/open-mnemo.js')
    const m = openMnemo({ env: { MNEMO_HOME: t.dir } })
    try {
      expect((await m.engine.stats()).memories).toBe(1)
    } finally {
      await m.close()
    }
  })

  it('doctor reports a store it cannot open as broken, with a fix, and still checks the agents', async () => {
    const s = sandbox()
    const { writeFileSync } = await import('node:fs')
    writeFileSync(s.io.env.MNEMO_HOME, 'not a folder')
    expect(await runCli(['doctor', '--json'], s.io)).toBe(1)
    const doc = JSON.parse(s.out().stdout) as { ok: boolean; agents: unknown[]; store: { status: string; detail: string; fix: string }[] }
    expect(doc.ok).toBe(false)
    expect(doc.agents.length).toBeGreaterThan(0)
    expect(doc.store).toEqual([
      {
        check: 'data directory / database',
        status: 'broken',
        detail: `MNEMO_HOME ${s.io.env.MNEMO_HOME} is not a directory (it is a file)`,
        fix: expect.stringContaining('MNEMO_HOME'),
      },
    ])
  })

  it('refuses an unknown agent and a missing agent name as usage errors', async () => {
    const s = sandbox()
    expect(await runCli(['connect', 'emacs'], s.io)).toBe(2)
    expect(s.out().stderr).toContain('unknown agent "emacs"; supported: claude-code, codex, gemini, cursor, opencode')
    expect(await runCli(['connect'], s.io)).toBe(2)
  })
})

describe('hook payloads of other agents', () => {
  it('normalises Cursor and Gemini CLI payloads onto the same observations, under their own agent', async () => {
    const { engine } = createTestEngine()
    await engine.captureHook(
      'UserPromptSubmit',
      JSON.stringify({ conversation_id: 'c-1', generation_id: 'g-1', workspace_roots: ['/work/shop'], prompt: 'add a cart endpoint' }),
      'cursor',
    )
    await engine.captureHook(
      'PostToolUse',
      JSON.stringify({
        session_id: 'gem-1',
        cwd: '/work/shop',
        hook_event_name: 'AfterTool',
        tool_name: 'run_shell_command',
        tool_input: { command: 'npm test' },
        tool_response: { output: 'all green' },
      }),
      'gemini',
    )
    const hits = await engine.recall('cart endpoint npm test green', { limit: 5 })
    expect(hits.map((h) => [h.kind, h.project]).sort()).toEqual([
      ['prompt', 'shop'],
      ['tool', 'shop'],
    ])
    expect((await engine.sessions()).map((s) => s.agent).sort()).toEqual(['cursor', 'gemini'])
  })

  it("maps an agent's own event names to the events connect registers for them", async () => {
    const { engine } = createTestEngine()
    await engine.captureHook(
      'beforeSubmitPrompt',
      JSON.stringify({ conversation_id: 'c-2', workspace_roots: ['/work/shop'], prompt: 'rename the checkout service' }),
      'cursor',
    )
    await engine.captureHook(
      'AfterTool',
      JSON.stringify({
        session_id: 'gem-2',
        cwd: '/work/shop',
        tool_name: 'read_file',
        tool_input: { absolute_path: '/work/shop/src/checkout.ts' },
        tool_response: { output: 'export const checkout' },
      }),
      'gemini',
    )
    // The same name from Claude Code is not an agent alias: kept as given (log only).
    await engine.captureHook(
      'beforeSubmitPrompt',
      JSON.stringify({ session_id: 'cc-1', cwd: '/work/shop', prompt: 'not mapped for claude-code' }),
    )
    const hits = await engine.recall('checkout', { limit: 5 })
    expect(hits.map((h) => h.kind).sort()).toEqual(['prompt', 'tool'])
    expect(await engine.recall('not mapped for claude-code', { limit: 5 })).toEqual([])
  })
})
