import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { MnemoError } from '../../../core/errors.js'
import { CLI, NODE, read, readJson, useConnectSandbox, write } from '../../../testing/connect-sandbox.js'
import { shellQuote } from './agent-command.js'
import { type AgentConnectOptions, applyConnectPlan, renderPlanDiff } from './connect-plan.js'
import { describeGeminiHooks, GEMINI_HOOK_EVENTS, geminiPaths, planGeminiConnect, planGeminiDisconnect } from './gemini.js'
import { parseJsonQuiet } from './json-config.js'
import type { ParsedJson } from '../../../testing/json.js'

let root: string
let home: string
let base: AgentConnectOptions
useConnectSandbox('mnemo-gemini-', (s) => ({ root, home, base } = s))

const settingsPath = (): string => join(home, '.gemini', 'settings.json')
const connect = (extra: Partial<AgentConnectOptions> = {}) => {
  const plan = planGeminiConnect({ ...base, ...extra })
  return { plan, written: applyConnectPlan(plan) }
}
const EVENTS = GEMINI_HOOK_EVENTS.map((e) => e.agentEvent)
const MNEMO_EVENT: Record<string, string> = {
  SessionStart: 'SessionStart',
  BeforeAgent: 'UserPromptSubmit',
  AfterTool: 'PostToolUse',
  AfterAgent: 'Stop',
  SessionEnd: 'SessionEnd',
}
const cmd = (event: string, cli = CLI): string => `"${NODE}" "${cli}" hook ${MNEMO_EVENT[event]} --agent gemini`
const group = (event: string, cli = CLI) => ({
  hooks: [{ name: `mnemo-${event}`, type: 'command', command: cmd(event, cli), timeout: event === 'SessionStart' ? 15000 : 10000 }],
})
const mcp = { command: NODE, args: [CLI, 'mcp', '--agent', 'gemini'] }
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

const userHook = { matcher: 'run_shell_command', hooks: [{ name: 'guard', type: 'command', command: './guard.sh', timeout: 5000 }] }
// JSON with comments and trailing commas, as Gemini CLI accepts.
const USER_SETTINGS = `{
  // theme first
  "theme": "GitHub",
  "mcpServers": {
    "other": { "command": "other-mcp", "args": ["--x"] }, // keep
  },
  "hooks": {
    "BeforeTool": [${JSON.stringify(userHook)}],
  },
  "general": { "vimMode": true },
}
`

describe('planGeminiConnect', () => {
  it('fresh install writes mcpServers.mnemo and one hook group per event', () => {
    const { plan, written } = connect()
    expect(written).toEqual([settingsPath()])
    expect(plan.files.map((f) => [f.path, f.kind, f.before, f.changed])).toEqual([[settingsPath(), 'settings', undefined, true]])
    expect(read(settingsPath())).toBe(
      `${JSON.stringify({ mcpServers: { mnemo: mcp }, hooks: Object.fromEntries(EVENTS.map((e) => [e, [group(e)]])) }, null, 2)}\n`,
    )
    expect(EVENTS).toEqual(['SessionStart', 'BeforeAgent', 'AfterTool', 'AfterAgent', 'SessionEnd'])
    expect(plan.notes).toEqual([])
    expect(renderPlanDiff(plan)).toContain(
      `${settingsPath()} (create)\n  mcp servers added: mnemo\n  hooks added: ${EVENTS.join(', ')}\n  @@ line 1 @@\n`,
    )
  })

  it('writes MNEMO_HOME into the MCP env and the hook commands', () => {
    connect({ mnemoHome: '/data/mnemo home' })
    const s = readJson(settingsPath())
    expect(s.mcpServers.mnemo).toEqual({ ...mcp, env: { MNEMO_HOME: '/data/mnemo home' } })
    expect(s.hooks.AfterAgent[0].hooks[0].command).toBe(`MNEMO_HOME="/data/mnemo home" ${cmd('AfterAgent')}`)
  })

  it('keeps comments, trailing commas, other servers, hooks and keys in order', () => {
    write(settingsPath(), USER_SETTINGS)
    connect()
    const text = read(settingsPath())
    expect(
      text.startsWith(
        '{\n  // theme first\n  "theme": "GitHub",\n  "mcpServers": {\n    "other": { "command": "other-mcp", "args": ["--x"] }, // keep\n',
      ),
    ).toBe(true)
    expect(text.endsWith('  "general": { "vimMode": true },\n}\n')).toBe(true)
    const parsed: ParsedJson = parseJsonQuiet(text)
    expect(Object.keys(parsed)).toEqual(['theme', 'mcpServers', 'hooks', 'general'])
    expect(Object.keys(parsed.mcpServers)).toEqual(['other', 'mnemo'])
    expect(parsed.mcpServers.mnemo).toEqual(mcp)
    expect(Object.keys(parsed.hooks)).toEqual(['BeforeTool', ...EVENTS])
    expect(parsed.hooks.BeforeTool).toEqual([userHook])
    expect(parsed.hooks.AfterTool).toEqual([group('AfterTool')])
  })

  it('is idempotent: a second run is byte-identical and reports no change', () => {
    write(settingsPath(), USER_SETTINGS)
    connect()
    const s1 = read(settingsPath())
    const { plan, written } = connect()
    expect(plan.files.map((f) => [f.changed, f.after])).toEqual([[false, s1]])
    expect(written).toEqual([])
    expect(renderPlanDiff(plan)).toBe(
      `${settingsPath()} (unchanged)\n  mcp servers unchanged: mnemo\n  hooks unchanged: ${EVENTS.join(', ')}\n`,
    )
  })

  it('replaces an older mnemo hook in place and keeps the rest of its group', () => {
    const mixed = {
      matcher: '*',
      hooks: [
        { type: 'command', command: 'echo hi' },
        { type: 'command', command: `"${NODE}" "/old/dist/adapters/cli/main.js" hook Stop --agent gemini` },
      ],
    }
    write(
      settingsPath(),
      `${JSON.stringify({ hooks: { AfterAgent: [mixed, { hooks: [{ type: 'command', command: 'later' }] }] } }, null, 2)}\n`,
    )
    const { plan } = connect()
    expect(readJson(settingsPath()).hooks.AfterAgent).toEqual([
      { matcher: '*', hooks: [mixed.hooks[0]] },
      { hooks: [{ type: 'command', command: 'later' }] },
      group('AfterAgent'),
    ])
    expect(renderPlanDiff(plan)).toContain('  hooks updated: AfterAgent\n')
  })

  it('quotes paths with spaces, quotes and backslashes for the shell, and refuses what Gemini would substitute', () => {
    const dir = join(root, 'we `x` "q" \\b $ 1')
    mkdirSync(dir)
    const fakeNode = join(dir, 'fake node')
    writeFileSync(fakeNode, '#!/bin/sh\nprintf \'%s\\n\' "$0" "$@" "home=$MNEMO_HOME"\n')
    chmodSync(fakeNode, 0o755)
    const cli = join(dir, 'dist (x)', 'main.js')
    const mnemoHome = join(dir, 'data')
    connect({ nodePath: fakeNode, cliPath: cli, mnemoHome })
    const s = readJson(settingsPath())
    expect(s.mcpServers.mnemo).toEqual({ command: fakeNode, args: [cli, 'mcp', '--agent', 'gemini'], env: { MNEMO_HOME: mnemoHome } })
    const command: string = s.hooks.AfterTool[0].hooks[0].command
    expect(command).toBe(`MNEMO_HOME=${shellQuote(mnemoHome)} ${shellQuote(fakeNode)} ${shellQuote(cli)} hook PostToolUse --agent gemini`)
    const out = execFileSync('/bin/sh', ['-c', command], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } })
    expect(out.split('\n')).toEqual([fakeNode, cli, 'hook', 'PostToolUse', '--agent', 'gemini', `home=${mnemoHome}`, ''])
    expect(expectInvalid(() => planGeminiConnect({ ...base, cliPath: '/opt/$HOME/main.js' }), 'cliPath').message).toContain(
      'Gemini CLI replaces',
    )
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal `${USER}` (which Gemini CLI expands) is the bad input
    expectInvalid(() => planGeminiConnect({ ...base, mnemoHome: '/data/${USER}' }), 'mnemoHome')
    expectInvalid(() => planGeminiConnect({ ...base, nodePath: '/n/$1/node' }), 'nodePath')
  })

  it('refuses invalid JSON and wrong types without touching the file', () => {
    const cases = ['{ "theme": }\n', '[1]\n', '{"mcpServers": []}\n', '{"hooks": "x"}\n', '{"hooks": {"AfterTool": {"command": "x"}}}\n']
    for (const text of cases) {
      write(settingsPath(), text)
      expectInvalid(() => planGeminiConnect(base), settingsPath())
      expect(read(settingsPath())).toBe(text)
    }
  })

  it('notes a hooks system turned off, and uses GEMINI_CLI_HOME and the project scope', () => {
    write(settingsPath(), '{"hooksConfig": {"enabled": false}}\n')
    expect(planGeminiConnect(base).notes).toEqual([
      `the hooks system is turned off in ${settingsPath()} (hooksConfig.enabled or tools.enableHooks is false); mnemo's MCP server still works, capture does not.`,
    ])
    const alt = join(root, 'alt')
    expect(geminiPaths({ ...base, env: { GEMINI_CLI_HOME: alt } }).settingsPath).toBe(join(alt, '.gemini', 'settings.json'))
    const { written, plan } = connect({ scope: 'project' })
    expect(written).toEqual([join(root, 'proj', '.gemini', 'settings.json')])
    expect(plan.notes).toEqual(['Gemini CLI ignores project settings in a folder you have not trusted when folder trust is on.'])
    expect(existsSync(join(alt, '.gemini'))).toBe(false)
  })

  it('describes its hooks', () => {
    expect(describeGeminiHooks().events.map((e) => `${e.agentEvent}>${e.mnemoEvent}`)).toEqual([
      'SessionStart>SessionStart',
      'BeforeAgent>UserPromptSubmit',
      'AfterTool>PostToolUse',
      'AfterAgent>Stop',
      'SessionEnd>SessionEnd',
    ])
  })
})

describe('planGeminiDisconnect', () => {
  it('removes only mnemo entries and restores the previous bytes', () => {
    write(settingsPath(), USER_SETTINGS)
    connect()
    const plan = planGeminiDisconnect({ ...base, cliPath: CLI })
    expect(renderPlanDiff(plan)).toContain(`  mcp servers removed: mnemo\n  hooks removed: ${EVENTS.join(', ')}\n`)
    expect(applyConnectPlan(plan)).toEqual([settingsPath()])
    expect(read(settingsPath())).toBe(USER_SETTINGS)
  })

  it('drops containers emptied by the removal and skips a missing file', () => {
    connect()
    applyConnectPlan(planGeminiDisconnect(base))
    expect(existsSync(settingsPath())).toBe(false)
    expect(planGeminiDisconnect(base).files).toEqual([])
  })
})
