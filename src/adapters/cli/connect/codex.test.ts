import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse as parseToml } from 'smol-toml'
import { describe, expect, it } from 'vitest'
import { MnemoError } from '../../../core/errors.js'
import { CLI, NODE, read, readJson, useConnectSandbox, write } from '../../../testing/connect-sandbox.js'
import { shellQuote } from './agent-command.js'
import {
  CODEX_HOOK_EVENTS,
  codexEventLabel,
  codexHookTrustHash,
  codexPaths,
  describeCodexHooks,
  planCodexConnect,
  planCodexDisconnect,
} from './codex.js'
import { type AgentConnectOptions, applyConnectPlan, renderPlanDiff } from './connect-plan.js'

let root: string
let home: string
let base: AgentConnectOptions
useConnectSandbox('mnemo-codex-', (s) => ({ root, home, base } = s))

const configPath = (): string => join(home, '.codex', 'config.toml')
const hooksPath = (): string => join(home, '.codex', 'hooks.json')
const connect = (extra: Partial<AgentConnectOptions> = {}) => {
  const plan = planCodexConnect({ ...base, ...extra })
  return { plan, written: applyConnectPlan(plan) }
}
const cmd = (event: string, cli = CLI): string => `"${NODE}" "${cli}" hook ${event} --agent codex`
const group = (event: string, cli = CLI) => ({
  hooks: [{ type: 'command', command: cmd(event, cli), timeout: event === 'SessionStart' ? 15 : 10 }],
})
const EVENTS = CODEX_HOOK_EVENTS.map((e) => e.agentEvent)
/** The text without the trust records connect adds at user scope (one test below checks those). */
const withoutTrust = (text: string): string =>
  text
    .replace(/\r?\n?\[hooks\.state\.[^\n]*\]\r?\ntrusted_hash = "sha256:[0-9a-f]{64}"\r?\n/g, '')
    .replace(/(\S)$/, '$1\n')
    .replace(/^$/, '')
const mnemoTable = (cli = CLI): string => `[mcp_servers.mnemo]\ncommand = "${NODE}"\nargs = ["${cli}", "mcp", "--agent", "codex"]\n`
const expectInvalid = (fn: () => unknown, path: string): MnemoError => {
  try {
    fn()
  } catch (err) {
    expect(MnemoError.is(err, 'INVALID_INPUT')).toBe(true)
    const e = err as MnemoError<'INVALID_INPUT'>
    expect(e.details.path).toBe(path)
    expect(e.message).toContain(path)
    return e
  }
  throw new Error('expected INVALID_INPUT')
}

const USER_TOML = [
  '# my codex config',
  'model = "o3"   # trailing comment',
  '',
  '[mcp_servers.other]',
  'command = "other"',
  'args = ["--x"]',
  '',
  '# profiles below',
  '[profiles.fast]',
  'model = "gpt-5-mini"',
  'notes = """',
  '[mcp_servers.mnemo]',
  'not a table: inside a string',
  '"""',
  '',
].join('\n')
const userHook = { matcher: 'Bash', hooks: [{ type: 'command', command: 'python3 ~/.codex/guard.py', timeout: 5 }] }
const USER_HOOKS = `${JSON.stringify({ hooks: { PreToolUse: [userHook], Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }] } }, null, 2)}\n`

describe('planCodexConnect', () => {
  it('fresh install writes [mcp_servers.mnemo] and one hook group per event', () => {
    const { plan, written } = connect()
    expect(written).toEqual([configPath(), hooksPath()])
    expect(plan.files.map((f) => [f.path, f.kind, f.before, f.changed])).toEqual([
      [configPath(), 'mcp', undefined, true],
      [hooksPath(), 'settings', undefined, true],
    ])
    expect(withoutTrust(read(configPath()))).toBe(mnemoTable())
    expect(read(hooksPath())).toBe(`${JSON.stringify({ hooks: Object.fromEntries(EVENTS.map((e) => [e, [group(e)]])) }, null, 2)}\n`)
    expect(EVENTS).toEqual(['SessionStart', 'UserPromptSubmit', 'PostToolUse', 'SubagentStop', 'Stop'])
    expect(plan.notes).toEqual([])
  })

  it("records Codex's trust in exactly the hooks it wrote, at user scope only, and disconnect removes the records", () => {
    write(configPath(), USER_TOML)
    write(hooksPath(), USER_HOOKS)
    connect()
    const doc = parseToml(read(configPath())) as { hooks: { state: Record<string, { trusted_hash: string }> } }
    const hooks = readJson(hooksPath()).hooks
    // Keys name the hook's position: the user's own Stop hook is group 0, mnemo's group 1; the user's hooks get no record.
    const keys = EVENTS.map((e) => `${hooksPath()}:${codexEventLabel(e)}:${e === 'Stop' ? 1 : 0}:0`)
    expect(Object.keys(doc.hooks.state).sort()).toEqual([...keys].sort())
    for (const e of EVENTS) {
      const g = hooks[e].findIndex((x: { hooks: Array<{ command: string }> }) => x.hooks[0]!.command.includes('hook '))
      const h = hooks[e][g].hooks[0]
      expect(doc.hooks.state[`${hooksPath()}:${codexEventLabel(e)}:${g}:0`]!.trusted_hash).toBe(codexHookTrustHash(e, undefined, h))
    }
    // Codex's own hash of {"event_name":"stop","hooks":[{"async":false,"command":"echo hi","timeout":600,"type":"command"}]}.
    expect(codexHookTrustHash('Stop', 'ignored', { command: 'echo hi' })).toBe(
      `sha256:${createHash('sha256').update('{"event_name":"stop","hooks":[{"async":false,"command":"echo hi","timeout":600,"type":"command"}]}').digest('hex')}`,
    )
    expect(codexHookTrustHash('SessionEnd', undefined, { command: 'x', timeout: 10 })).toBe(
      codexHookTrustHash('SessionEnd', undefined, { command: 'x', timeout: 3 }),
    )
    applyConnectPlan(planCodexDisconnect(base))
    expect(read(configPath())).toBe(USER_TOML)
    const proj = join(root, 'proj-trust')
    mkdirSync(proj)
    const { plan } = connect({ scope: 'project', projectDir: proj })
    expect(read(join(proj, '.codex', 'config.toml'))).not.toContain('hooks.state')
    expect(plan.notes[0]).toContain('start `codex` in this project and accept the hook review')
  })

  it('writes MNEMO_HOME into the MCP env and the hook commands', () => {
    connect({ mnemoHome: '/data/mnemo home' })
    expect(withoutTrust(read(configPath()))).toBe(`${mnemoTable().trimEnd()}\nenv = { MNEMO_HOME = "/data/mnemo home" }\n`)
    expect(readJson(hooksPath()).hooks.Stop[0].hooks[0].command).toBe(`MNEMO_HOME="/data/mnemo home" ${cmd('Stop')}`)
  })

  it('keeps comments, other tables and multi-line strings byte for byte, and adds the table after the other servers', () => {
    write(configPath(), USER_TOML)
    write(hooksPath(), USER_HOOKS)
    connect()
    const lines = USER_TOML.split('\n')
    expect(withoutTrust(read(configPath()))).toBe(
      [...lines.slice(0, 6), '', ...mnemoTable().trimEnd().split('\n'), ...lines.slice(6)].join('\n'),
    )
    const hooks = readJson(hooksPath()).hooks
    expect(Object.keys(hooks)).toEqual(['PreToolUse', 'Stop', 'SessionStart', 'UserPromptSubmit', 'PostToolUse', 'SubagentStop'])
    expect(hooks.PreToolUse).toEqual([userHook])
    expect(hooks.Stop).toEqual([{ hooks: [{ type: 'command', command: 'say done' }] }, group('Stop')])
  })

  it('appends at the end when there is no other server table, with one blank line', () => {
    write(configPath(), 'model = "o3"\n[tui]\nnotifications = true')
    connect()
    expect(withoutTrust(read(configPath()))).toBe(`model = "o3"\n[tui]\nnotifications = true\n\n${mnemoTable()}`)
  })

  it('is idempotent: a second run is byte-identical and reports no change', () => {
    write(configPath(), USER_TOML)
    write(hooksPath(), USER_HOOKS)
    connect()
    const [c1, h1] = [read(configPath()), read(hooksPath())]
    const { plan, written } = connect()
    expect(plan.files.map((f) => f.changed)).toEqual([false, false])
    expect(plan.files.map((f) => f.after)).toEqual([c1, h1])
    expect(written).toEqual([])
    expect(plan.notes).toEqual([])
    expect(renderPlanDiff(plan)).toBe(
      `${configPath()} (unchanged)\n  mcp servers unchanged: mnemo\n  hook trust records unchanged: stop:1:0, ${EVENTS.filter(
        (e) => e !== 'Stop',
      )
        .map((e) => `${codexEventLabel(e)}:0:0`)
        .join(', ')}\n${hooksPath()} (unchanged)\n  hooks unchanged: Stop, ${EVENTS.filter((e) => e !== 'Stop').join(', ')}\n`,
    )
  })

  it('rewrites an older mnemo table in place, sub-tables included, and leaves the comment after it', () => {
    const text = [
      '[mcp_servers.mnemo]',
      'command = "/old/node"',
      'args = ["/old/dist/adapters/cli/main.js", "mcp"]',
      '',
      '[mcp_servers.mnemo.env]',
      'MNEMO_HOME = "/old/home"',
      '',
      '# next: the other server',
      '[mcp_servers.other]',
      'command = "other"',
      '',
    ].join('\n')
    write(configPath(), text)
    const { plan } = connect()
    expect(withoutTrust(read(configPath()))).toBe(`${mnemoTable()}\n# next: the other server\n[mcp_servers.other]\ncommand = "other"\n`)
    expect(renderPlanDiff(plan)).toContain(
      `${configPath()} (update)\n  mcp servers updated: mnemo\n  hook trust records added: ${EVENTS.map((e) => `${codexEventLabel(e)}:0:0`).join(', ')}\n  @@ line 2 @@\n`,
    )
  })

  it('quotes and escapes paths with spaces, quotes, backslashes and $ for TOML and for the shell', () => {
    const dir = join(root, 'we $HOME `x` "q" \\b')
    mkdirSync(dir)
    const fakeNode = join(dir, 'fake node$1')
    writeFileSync(fakeNode, '#!/bin/sh\nprintf \'%s\\n\' "$0" "$@" "home=$MNEMO_HOME"\n')
    chmodSync(fakeNode, 0o755)
    const cli = join(dir, 'dist $(echo hi)', 'main.js')
    const mnemoHome = join(dir, 'data $USER')
    connect({ nodePath: fakeNode, cliPath: cli, mnemoHome })
    const toml = withoutTrust(read(configPath()))
    expect(toml).toContain(`command = "${fakeNode.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`)
    expect(parseToml(toml)).toEqual({
      mcp_servers: { mnemo: { command: fakeNode, args: [cli, 'mcp', '--agent', 'codex'], env: { MNEMO_HOME: mnemoHome } } },
    })
    const command: string = readJson(hooksPath()).hooks.PostToolUse[0].hooks[0].command
    expect(command).toBe(`MNEMO_HOME=${shellQuote(mnemoHome)} ${shellQuote(fakeNode)} ${shellQuote(cli)} hook PostToolUse --agent codex`)
    const out = execFileSync('/bin/sh', ['-c', command], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } })
    expect(out.split('\n')).toEqual([fakeNode, cli, 'hook', 'PostToolUse', '--agent', 'codex', `home=${mnemoHome}`, ''])
    expect(connect({ nodePath: fakeNode, cliPath: cli, mnemoHome }).plan.files.map((f) => f.changed)).toEqual([false, false])
  })

  it('keeps CRLF line ends', () => {
    write(configPath(), 'model = "o3"\r\n\r\n[mcp_servers.other]\r\ncommand = "x"\r\n')
    connect()
    expect(withoutTrust(read(configPath()))).toBe(
      `model = "o3"\r\n\r\n[mcp_servers.other]\r\ncommand = "x"\r\n\r\n${mnemoTable().replace(/\n/g, '\r\n')}`,
    )
  })

  it('refuses invalid TOML, inline or dotted mnemo entries and non-strict hooks.json without touching the file', () => {
    const cases: Array<[string, string]> = [
      [configPath(), 'model = "o3\n'],
      [configPath(), '[mcp_servers]\nmnemo = { command = "x" }\n'],
      [configPath(), 'mcp_servers.mnemo.command = "x"\n'],
      [configPath(), 'mcp_servers = { other = { command = "x" } }\n'],
      [hooksPath(), '{\n  // mine\n  "hooks": {}\n}\n'],
      [hooksPath(), '{"hooks": []}\n'],
      [hooksPath(), '{"hooks": {"Stop": {"command": "x"}}}\n'],
    ]
    for (const [path, text] of cases) {
      rmSync(join(home, '.codex'), { recursive: true, force: true })
      write(path, text)
      expectInvalid(() => planCodexConnect(base), path)
      expect(read(path)).toBe(text)
    }
  })

  it('notes hooks turned off in [features] and project trust', () => {
    write(configPath(), '[features]\nhooks = false\n')
    expect(planCodexConnect(base).notes[0]).toBe(
      `hooks are turned off in ${configPath()} ([features] hooks = false); mnemo's MCP server still works, capture does not.`,
    )
    const proj = join(root, 'proj')
    const { plan, written } = connect({ scope: 'project' })
    expect(written).toEqual([join(proj, '.codex', 'config.toml'), join(proj, '.codex', 'hooks.json')])
    expect(plan.notes).toContain('Codex reads .codex/ in a project only when you trust that project.')
  })

  it('honours CODEX_HOME', () => {
    const dir = join(root, 'codex-home')
    expect(codexPaths({ ...base, env: { CODEX_HOME: dir } })).toEqual({
      scope: 'user',
      configPath: join(dir, 'config.toml'),
      hooksPath: join(dir, 'hooks.json'),
    })
    expect(codexPaths({ ...base, env: { CODEX_HOME: '' } }).configPath).toBe(configPath())
    const { written } = connect({ env: { CODEX_HOME: dir } })
    expect(written).toEqual([join(dir, 'config.toml'), join(dir, 'hooks.json')])
    expect(existsSync(configPath())).toBe(false)
  })

  it('describes its hooks', () => {
    const d = describeCodexHooks()
    expect(d.supported).toBe(true)
    expect(d.events.map((e) => `${e.agentEvent}>${e.mnemoEvent}`)).toEqual([
      'SessionStart>SessionStart',
      'UserPromptSubmit>UserPromptSubmit',
      'PostToolUse>PostToolUse',
      'SubagentStop>SubagentStop',
      'Stop>Stop',
    ])
  })
})

describe('planCodexDisconnect', () => {
  it('removes only mnemo entries and restores the previous bytes', () => {
    write(configPath(), USER_TOML)
    write(hooksPath(), USER_HOOKS)
    connect()
    const plan = planCodexDisconnect({ ...base, cliPath: CLI })
    expect(renderPlanDiff(plan)).toContain('  mcp servers removed: mnemo\n')
    expect(renderPlanDiff(plan)).toContain(`  hooks removed: Stop, ${EVENTS.filter((e) => e !== 'Stop').join(', ')}\n`)
    expect(applyConnectPlan(plan)).toEqual([configPath(), hooksPath()])
    expect(withoutTrust(read(configPath()))).toBe(USER_TOML)
    expect(read(hooksPath())).toBe(USER_HOOKS)
  })

  it('deletes the files left empty when only mnemo was there, and skips missing files', () => {
    connect()
    applyConnectPlan(planCodexDisconnect(base))
    expect(existsSync(configPath())).toBe(false)
    expect(existsSync(hooksPath())).toBe(false)
    expect(renderPlanDiff(planCodexDisconnect(base))).toBe('nothing to do: no Codex CLI configuration files found\n')
  })
})
