import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { MnemoError } from '../../../core/errors.js'
import { CLI, NODE, read, readJson, useConnectSandbox, write } from '../../../testing/connect-sandbox.js'
import { isMnemoHookCommand, shellQuote } from './agent-command.js'
import { CLAUDE_CODE_HOOK_EVENTS, claudeCodeHookCommand, disconnectClaudeCode, planClaudeCodeConnect } from './claude-code.js'
import { type AgentConnectOptions, applyConnectPlan, renderPlanDiff } from './connect-plan.js'

let root: string
let home: string
let base: AgentConnectOptions
useConnectSandbox('mnemo-connect-', (s) => ({ root, home, base } = s))

const settingsPath = (): string => join(home, '.claude', 'settings.json')
const mcpPath = (): string => join(home, '.claude.json')
const connect = (extra: Partial<AgentConnectOptions> = {}) => {
  const plan = planClaudeCodeConnect({ ...base, ...extra })
  return { plan, written: applyConnectPlan(plan) }
}
const cmd = (event: string, cli = CLI): string => `"${NODE}" "${cli}" hook ${event}`
const mnemoGroup = (event: string, cli = CLI) => {
  const hook = { type: 'command', command: cmd(event, cli), timeout: event === 'SessionStart' ? 15 : 10 }
  return ['PreToolUse', 'PostToolUse', 'PostToolUseFailure'].includes(event) ? { matcher: '*', hooks: [hook] } : { hooks: [hook] }
}
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

const userHook = { matcher: 'Edit', hooks: [{ type: 'command', command: 'prettier --write "$FILE"' }] }
const existingSettings = {
  permissions: { allow: ['Bash(ls:*)'] },
  hooks: { PostToolUse: [userHook], Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }] },
  model: 'opus',
}
const otherServer = { type: 'stdio', command: 'other-mcp', args: ['--x'] }
const existingMcp = { numStartups: 4, mcpServers: { other: otherServer }, projects: { '/a': { allowedTools: [] } } }

describe('claudeCodeHookCommand', () => {
  it('quotes node and cli paths and optionally prefixes MNEMO_HOME', () => {
    expect(claudeCodeHookCommand('Stop', { nodePath: NODE, cliPath: CLI })).toBe(`"${NODE}" "${CLI}" hook Stop`)
    expect(claudeCodeHookCommand('Stop', { nodePath: '/a b/$x/n`o"d\\e', cliPath: CLI, mnemoHome: '/h $1' })).toBe(
      `MNEMO_HOME="/h \\$1" "/a b/\\$x/n\\\`o\\"d\\\\e" "${CLI}" hook Stop`,
    )
    expect(shellQuote('plain')).toBe('"plain"')
  })

  it('rejects relative paths', () => {
    expectInvalid(() => claudeCodeHookCommand('Stop', { nodePath: 'node', cliPath: CLI }), 'nodePath')
    expectInvalid(() => planClaudeCodeConnect({ ...base, cliPath: 'dist/main.js' }), 'cliPath')
  })

  it('survives a real POSIX shell with spaces, $, backticks, quotes and backslashes', () => {
    const dir = join(root, 'we $HOME `x` "q" \\b')
    mkdirSync(dir)
    const fakeNode = join(dir, 'fake node$1')
    writeFileSync(fakeNode, '#!/bin/sh\nprintf \'%s\\n\' "$0" "$@" "home=$MNEMO_HOME"\n')
    chmodSync(fakeNode, 0o755)
    const cli = join(dir, 'dist $(echo hi)', 'main.js')
    const mnemoHome = join(dir, 'data $USER')
    const command = claudeCodeHookCommand('PostToolUse', { nodePath: fakeNode, cliPath: cli, mnemoHome })
    expect(command).toBe(`MNEMO_HOME=${shellQuote(mnemoHome)} ${shellQuote(fakeNode)} ${shellQuote(cli)} hook PostToolUse`)
    const out = execFileSync('/bin/sh', ['-c', command], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } })
    expect(out.split('\n')).toEqual([fakeNode, cli, 'hook', 'PostToolUse', `home=${mnemoHome}`, ''])
  })
})

describe('planClaudeCodeConnect + applyConnectPlan', () => {
  it('fresh install creates both files with all 11 events and the MCP entry', () => {
    const { plan, written } = connect()
    expect(written).toEqual([settingsPath(), mcpPath()])
    expect(plan.files.map((f) => [f.path, f.kind, f.before, f.changed])).toEqual([
      [settingsPath(), 'settings', undefined, true],
      [mcpPath(), 'mcp', undefined, true],
    ])
    const settings = readJson(settingsPath())
    expect(Object.keys(settings.hooks)).toEqual([...CLAUDE_CODE_HOOK_EVENTS])
    expect(CLAUDE_CODE_HOOK_EVENTS).toHaveLength(11)
    expect(settings).toEqual({ hooks: Object.fromEntries(CLAUDE_CODE_HOOK_EVENTS.map((e) => [e, [mnemoGroup(e)]])) })
    expect(read(settingsPath())).toBe(`${JSON.stringify(settings, null, 2)}\n`)
    expect(read(mcpPath())).toBe(
      `${JSON.stringify({ mcpServers: { mnemo: { type: 'stdio', command: NODE, args: [CLI, 'mcp', '--agent', 'claude-code'] } } }, null, 2)}\n`,
    )
  })

  it('writes MNEMO_HOME into hook commands and the MCP env', () => {
    connect({ mnemoHome: '/data/mnemo home' })
    expect(readJson(settingsPath()).hooks.Stop[0].hooks[0].command).toBe(`MNEMO_HOME="/data/mnemo home" ${cmd('Stop')}`)
    expect(readJson(mcpPath()).mcpServers.mnemo).toEqual({
      type: 'stdio',
      command: NODE,
      args: [CLI, 'mcp', '--agent', 'claude-code'],
      env: { MNEMO_HOME: '/data/mnemo home' },
    })
  })

  it('keeps unrelated hooks, keys and MCP servers in order', () => {
    write(settingsPath(), existingSettings)
    write(mcpPath(), existingMcp)
    connect()
    const settings = readJson(settingsPath())
    expect(Object.keys(settings)).toEqual(['permissions', 'hooks', 'model'])
    expect(settings.permissions).toEqual(existingSettings.permissions)
    expect(settings.model).toBe('opus')
    expect(Object.keys(settings.hooks)).toEqual([
      'PostToolUse',
      'Stop',
      ...CLAUDE_CODE_HOOK_EVENTS.filter((e) => e !== 'PostToolUse' && e !== 'Stop'),
    ])
    expect(settings.hooks.PostToolUse).toEqual([userHook, mnemoGroup('PostToolUse')])
    expect(settings.hooks.Stop).toEqual([existingSettings.hooks.Stop[0], mnemoGroup('Stop')])
    const mcp = readJson(mcpPath())
    expect(Object.keys(mcp)).toEqual(['numStartups', 'mcpServers', 'projects'])
    expect(Object.keys(mcp.mcpServers)).toEqual(['other', 'mnemo'])
    expect(mcp.mcpServers.other).toEqual(otherServer)
    expect(mcp.projects).toEqual(existingMcp.projects)
  })

  it('is idempotent: a second run is byte-identical and reports no change', () => {
    write(settingsPath(), existingSettings)
    write(mcpPath(), existingMcp)
    connect()
    const [s1, m1] = [read(settingsPath()), read(mcpPath())]
    const { plan, written } = connect()
    expect(plan.files.map((f) => f.changed)).toEqual([false, false])
    expect(plan.files.map((f) => f.after)).toEqual([s1, m1])
    expect(written).toEqual([])
    expect([read(settingsPath()), read(mcpPath())]).toEqual([s1, m1])
    expect(renderPlanDiff(plan)).toBe(
      `${settingsPath()} (unchanged)\n  hooks unchanged: ${['PostToolUse', 'Stop', ...CLAUDE_CODE_HOOK_EVENTS.filter((e) => e !== 'PostToolUse' && e !== 'Stop')].join(', ')}\n${mcpPath()} (unchanged)\n  mcp servers unchanged: mnemo\n`,
    )
  })

  it('keeps the bytes of a file that needs no semantic change, whatever its formatting', () => {
    connect()
    const compact = JSON.stringify(readJson(mcpPath()))
    writeFileSync(mcpPath(), compact)
    const plan = planClaudeCodeConnect(base)
    expect(plan.files[1]).toMatchObject({ changed: false, after: compact })
  })

  it('a new cliPath replaces the old entries in place instead of adding more', () => {
    write(settingsPath(), { hooks: { PostToolUse: [mnemoGroup('PostToolUse'), userHook] } })
    connect()
    const moved = '/home/me/new place/dist/adapters/cli/main.js'
    const { plan } = connect({ cliPath: moved })
    expect(plan.files.map((f) => f.changed)).toEqual([true, true])
    const settings = readJson(settingsPath())
    expect(settings.hooks.PostToolUse).toEqual([mnemoGroup('PostToolUse', moved), userHook])
    for (const e of CLAUDE_CODE_HOOK_EVENTS) {
      const commands = settings.hooks[e].flatMap((g: { hooks: { command: string }[] }) => g.hooks.map((h) => h.command))
      expect(commands.filter((c: string) => isMnemoHookCommand(c))).toEqual([cmd(e, moved)])
    }
    expect(readJson(mcpPath()).mcpServers.mnemo.args).toEqual([moved, 'mcp', '--agent', 'claude-code'])
    const order = ['PostToolUse', ...CLAUDE_CODE_HOOK_EVENTS.filter((e) => e !== 'PostToolUse')]
    expect(renderPlanDiff(planClaudeCodeConnect({ ...base, cliPath: CLI }))).toContain(`  hooks updated: ${order.join(', ')}\n`)
  })

  it('removes legacy mnemo commands from mixed groups and keeps the rest of the group', () => {
    const mixed = {
      matcher: '',
      hooks: [
        { type: 'command', command: 'echo hi' },
        { type: 'command', command: 'npx mnemo hook Stop' },
      ],
    }
    write(settingsPath(), { hooks: { Stop: [mixed] } })
    connect()
    expect(readJson(settingsPath()).hooks.Stop).toEqual([{ matcher: '', hooks: [mixed.hooks[0]] }, mnemoGroup('Stop')])
  })

  it('refuses invalid JSON, JSON with comments and wrong types without touching the file', () => {
    const cases: Array<[string, string]> = [
      [settingsPath(), '{ "model": "opus", }\n'],
      [settingsPath(), '{\n  // my settings\n  "model": "opus"\n}\n'],
      [settingsPath(), '{"hooks": []}\n'],
      [settingsPath(), '{"hooks": {"Stop": {"command": "x"}}}\n'],
      [settingsPath(), '[1, 2]\n'],
      [mcpPath(), '{"mcpServers": "nope"}\n'],
    ]
    for (const [path, text] of cases) {
      rmSync(join(home, '.claude'), { recursive: true, force: true })
      rmSync(mcpPath(), { force: true })
      write(path, text)
      expectInvalid(() => planClaudeCodeConnect(base), path)
      expect(read(path)).toBe(text)
    }
    rmSync(mcpPath(), { force: true })
    write(settingsPath(), '{"hooks": []}')
    expect(expectInvalid(() => planClaudeCodeConnect(base), settingsPath()).message).toContain('"hooks" must be an object')
  })

  it('dry-run planning writes nothing and renders the change', () => {
    const plan = planClaudeCodeConnect(base)
    expect(existsSync(join(home, '.claude'))).toBe(false)
    expect(existsSync(mcpPath())).toBe(false)
    const text = renderPlanDiff(plan)
    expect(text).toContain(
      `${settingsPath()} (create)\n  hooks added: ${CLAUDE_CODE_HOOK_EVENTS.join(', ')}\n  @@ line 1 @@\n  + {\n  +   "hooks": {`,
    )
    expect(text).toContain(`${mcpPath()} (create)\n  mcp servers added: mnemo\n`)
    expect(text).toContain(`  +             "command": ${JSON.stringify(cmd('SessionStart'))},\n  +             "timeout": 15\n`)
  })

  it('project scope writes .claude/settings.json and .mcp.json under the project', () => {
    const proj = join(root, 'proj')
    const { written } = connect({ scope: 'project' })
    expect(written).toEqual([join(proj, '.claude', 'settings.json'), join(proj, '.mcp.json')])
    expect(Object.keys(readJson(written[0]!).hooks)).toHaveLength(11)
    expect(readJson(written[1]!).mcpServers.mnemo.command).toBe(NODE)
    expect(existsSync(settingsPath())).toBe(false)
  })

  it('respects CLAUDE_CONFIG_DIR for both files', () => {
    const configDir = join(root, 'cfg')
    const { written } = connect({ env: { CLAUDE_CONFIG_DIR: configDir } })
    expect(written).toEqual([join(configDir, 'settings.json'), join(configDir, '.claude.json')])
    expect(existsSync(mcpPath())).toBe(false)
  })

  it('keeps the original file mode', () => {
    write(mcpPath(), existingMcp)
    chmodSync(mcpPath(), 0o600)
    connect()
    expect(statSync(mcpPath()).mode & 0o777).toBe(0o600)
  })

  it('refuses to apply when a file changed after planning', () => {
    write(mcpPath(), existingMcp)
    const plan = planClaudeCodeConnect(base)
    writeFileSync(mcpPath(), '{"changed": true}\n')
    expectInvalid(() => applyConnectPlan(plan), mcpPath())
    expect(read(mcpPath())).toBe('{"changed": true}\n')
  })
})

describe('disconnectClaudeCode', () => {
  it('removes only mnemo entries and restores the previous content', () => {
    write(settingsPath(), existingSettings)
    write(mcpPath(), existingMcp)
    const [s0, m0] = [read(settingsPath()), read(mcpPath())]
    connect()
    const plan = disconnectClaudeCode({ ...base, cliPath: CLI })
    expect(renderPlanDiff(plan)).toContain(
      `  hooks removed: ${['PostToolUse', 'Stop', ...CLAUDE_CODE_HOOK_EVENTS.filter((e) => e !== 'PostToolUse' && e !== 'Stop')].join(', ')}\n`,
    )
    expect(renderPlanDiff(plan)).toContain('  mcp servers removed: mnemo\n')
    expect(applyConnectPlan(plan)).toEqual([settingsPath(), mcpPath()])
    expect([read(settingsPath()), read(mcpPath())]).toEqual([s0, m0])
  })

  it('deletes a file left holding nothing but {} and skips missing files', () => {
    connect()
    const plan = disconnectClaudeCode(base)
    expect(renderPlanDiff(plan)).toContain(`remove ${settingsPath()}`)
    expect(renderPlanDiff(plan)).toContain(`remove ${mcpPath()}`)
    expect(applyConnectPlan(plan)).toEqual([settingsPath(), mcpPath()])
    expect([existsSync(settingsPath()), existsSync(mcpPath())]).toEqual([false, false])
    expect(disconnectClaudeCode(base).files).toEqual([])
  })

  it('keeps a file that still holds anything but mnemo’s entries, and a {} file that held none', () => {
    write(settingsPath(), { model: 'opus' })
    write(mcpPath(), { mcpServers: {}, projects: {} })
    connect()
    applyConnectPlan(disconnectClaudeCode(base))
    expect(readJson(settingsPath())).toEqual({ model: 'opus' })
    expect(readJson(mcpPath())).toEqual({ projects: {} })
    write(mcpPath(), '{}\n')
    applyConnectPlan(disconnectClaudeCode(base))
    expect(read(mcpPath())).toBe('{}\n')
  })
})
