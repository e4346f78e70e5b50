import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { MnemoError } from '../../../core/errors.js'
import { CLI, NODE, read, readJson, useConnectSandbox, write } from '../../../testing/connect-sandbox.js'
import { shellQuote } from './agent-command.js'
import { type AgentConnectOptions, applyConnectPlan, renderPlanDiff } from './connect-plan.js'
import { CURSOR_HOOK_EVENTS, describeCursorHooks, planCursorConnect, planCursorDisconnect } from './cursor.js'

let root: string
let home: string
let base: AgentConnectOptions
useConnectSandbox('mnemo-cursor-', (s) => ({ root, home, base } = s))

const mcpPath = (): string => join(home, '.cursor', 'mcp.json')
const hooksPath = (): string => join(home, '.cursor', 'hooks.json')
const connect = (extra: Partial<AgentConnectOptions> = {}) => {
  const plan = planCursorConnect({ ...base, ...extra })
  return { plan, written: applyConnectPlan(plan) }
}
const EVENTS = CURSOR_HOOK_EVENTS.map((e) => e.agentEvent)
const MNEMO: Record<string, string> = Object.fromEntries(CURSOR_HOOK_EVENTS.map((e) => [e.agentEvent, e.mnemoEvent]))
const hook = (event: string, cli = CLI) => ({ command: `"${NODE}" "${cli}" hook ${MNEMO[event]} --agent cursor` })
const mcp = { command: NODE, args: [CLI, 'mcp', '--agent', 'cursor'] }
const expectInvalid = (fn: () => unknown, path: string): void => {
  try {
    fn()
  } catch (err) {
    expect(MnemoError.is(err, 'INVALID_INPUT')).toBe(true)
    expect((err as MnemoError<'INVALID_INPUT'>).details.path).toBe(path)
    expect((err as Error).message).toContain(path)
    return
  }
  throw new Error('expected INVALID_INPUT')
}

const USER_MCP = `{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": { "GITHUB_TOKEN": "\${env:GITHUB_TOKEN}" }
    }
  }
}
`
const USER_HOOKS = `{
  "version": 1,
  "hooks": {
    "afterFileEdit": [{ "command": "./format.sh" }],
    "stop": [{ "command": "say done" }]
  }
}
`

describe('planCursorConnect', () => {
  it('fresh install writes mcp.json and hooks.json', () => {
    const { plan, written } = connect()
    expect(written).toEqual([mcpPath(), hooksPath()])
    expect(plan.files.map((f) => [f.path, f.kind, f.before, f.changed])).toEqual([
      [mcpPath(), 'mcp', undefined, true],
      [hooksPath(), 'settings', undefined, true],
    ])
    expect(read(mcpPath())).toBe(`${JSON.stringify({ mcpServers: { mnemo: mcp } }, null, 2)}\n`)
    expect(read(hooksPath())).toBe(
      `${JSON.stringify({ version: 1, hooks: Object.fromEntries(EVENTS.map((e) => [e, [hook(e)]])) }, null, 2)}\n`,
    )
    expect(EVENTS).toEqual([
      'sessionStart',
      'beforeSubmitPrompt',
      'postToolUse',
      'postToolUseFailure',
      'subagentStop',
      'afterAgentResponse',
      'sessionEnd',
    ])
  })

  it('writes MNEMO_HOME into the MCP env and the hook commands', () => {
    connect({ mnemoHome: '/data/mnemo home' })
    expect(readJson(mcpPath()).mcpServers.mnemo).toEqual({ ...mcp, env: { MNEMO_HOME: '/data/mnemo home' } })
    expect(readJson(hooksPath()).hooks.sessionStart).toEqual([{ command: `MNEMO_HOME="/data/mnemo home" ${hook('sessionStart').command}` }])
  })

  it('keeps other servers, hooks and formatting; adds only mnemo lines', () => {
    write(mcpPath(), USER_MCP)
    write(hooksPath(), USER_HOOKS)
    connect()
    const mnemoLines = JSON.stringify({ mnemo: mcp }, null, 2)
      .split('\n')
      .slice(1, -1)
      .map((l) => `  ${l}`)
    expect(read(mcpPath())).toBe(
      [
        ...USER_MCP.split('\n')
          .slice(0, 7)
          .map((l, i) => (i === 6 ? `${l},` : l)),
        ...mnemoLines,
        '  }',
        '}',
        '',
      ].join('\n'),
    )
    const hooks = readJson(hooksPath())
    expect(Object.keys(hooks.hooks)).toEqual(['afterFileEdit', 'stop', ...EVENTS])
    expect(hooks.hooks.afterFileEdit).toEqual([{ command: './format.sh' }])
    expect(hooks.hooks.stop).toEqual([{ command: 'say done' }])
    expect(
      read(hooksPath()).startsWith(
        '{\n  "version": 1,\n  "hooks": {\n    "afterFileEdit": [{ "command": "./format.sh" }],\n    "stop": [{ "command": "say done" }],\n',
      ),
    ).toBe(true)
  })

  it('is idempotent: a second run is byte-identical and reports no change', () => {
    write(mcpPath(), USER_MCP)
    write(hooksPath(), USER_HOOKS)
    connect()
    const [m1, h1] = [read(mcpPath()), read(hooksPath())]
    const { plan, written } = connect()
    expect(plan.files.map((f) => [f.changed, f.after])).toEqual([
      [false, m1],
      [false, h1],
    ])
    expect(written).toEqual([])
    expect(renderPlanDiff(plan)).toBe(
      `${mcpPath()} (unchanged)\n  mcp servers unchanged: mnemo\n${hooksPath()} (unchanged)\n  hooks unchanged: ${EVENTS.join(', ')}\n`,
    )
  })

  it('replaces an older mnemo command in place', () => {
    write(
      hooksPath(),
      `${JSON.stringify({ version: 1, hooks: { stop: [{ command: 'a' }], sessionStart: [{ command: 'first' }, { command: '"/n" "/old/dist/adapters/cli/main.js" hook SessionStart --agent cursor' }, { command: 'last' }] } }, null, 2)}\n`,
    )
    const { plan } = connect()
    expect(readJson(hooksPath()).hooks.sessionStart).toEqual([{ command: 'first' }, hook('sessionStart'), { command: 'last' }])
    expect(renderPlanDiff(plan)).toContain(
      '  hooks added: beforeSubmitPrompt, postToolUse, postToolUseFailure, subagentStop, afterAgentResponse, sessionEnd\n  hooks updated: sessionStart\n',
    )
  })

  it('quotes paths for the shell and refuses ${ that Cursor would interpolate', () => {
    const dir = join(root, 'we $HOME `x` "q" \\b')
    mkdirSync(dir)
    const fakeNode = join(dir, 'fake node$1')
    writeFileSync(fakeNode, '#!/bin/sh\nprintf \'%s\\n\' "$0" "$@"\n')
    chmodSync(fakeNode, 0o755)
    const cli = join(dir, 'dist $(echo hi)', 'main.js')
    connect({ nodePath: fakeNode, cliPath: cli })
    expect(readJson(mcpPath()).mcpServers.mnemo).toEqual({ command: fakeNode, args: [cli, 'mcp', '--agent', 'cursor'] })
    const command: string = readJson(hooksPath()).hooks.postToolUse[0].command
    expect(command).toBe(`${shellQuote(fakeNode)} ${shellQuote(cli)} hook PostToolUse --agent cursor`)
    expect(execFileSync('/bin/sh', ['-c', command], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } }).split('\n')).toEqual([
      fakeNode,
      cli,
      'hook',
      'PostToolUse',
      '--agent',
      'cursor',
      '',
    ])
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal `${userHome}` (Cursor's variable syntax) is the bad input
    expectInvalid(() => planCursorConnect({ ...base, cliPath: '/opt/${userHome}/main.js' }), 'cliPath')
  })

  it('refuses invalid JSON and wrong types without touching the file', () => {
    const cases: Array<[string, string]> = [
      [mcpPath(), '{"mcpServers": '],
      [mcpPath(), '{"mcpServers": [1]}\n'],
      [hooksPath(), '{"hooks": []}\n'],
      [hooksPath(), '{"hooks": {"stop": "x", "sessionStart": {}}}\n'],
    ]
    for (const [path, text] of cases) {
      rmSync(join(home, '.cursor'), { recursive: true, force: true })
      write(path, text)
      expectInvalid(() => planCursorConnect(base), path)
      expect(read(path)).toBe(text)
    }
  })

  it('project scope writes under the project .cursor folder', () => {
    const { written } = connect({ scope: 'project' })
    expect(written).toEqual([join(root, 'proj', '.cursor', 'mcp.json'), join(root, 'proj', '.cursor', 'hooks.json')])
  })

  it('describes its hooks', () => {
    expect(describeCursorHooks().events.map((e) => `${e.agentEvent}>${e.mnemoEvent}`)).toEqual([
      'sessionStart>SessionStart',
      'beforeSubmitPrompt>UserPromptSubmit',
      'postToolUse>PostToolUse',
      'postToolUseFailure>PostToolUseFailure',
      'subagentStop>SubagentStop',
      'afterAgentResponse>Stop',
      'sessionEnd>SessionEnd',
    ])
  })
})

describe('planCursorDisconnect', () => {
  it('removes only mnemo entries and restores the previous bytes', () => {
    write(mcpPath(), USER_MCP)
    write(hooksPath(), USER_HOOKS)
    connect()
    const plan = planCursorDisconnect({ ...base, cliPath: CLI })
    expect(renderPlanDiff(plan)).toContain(`  hooks removed: ${EVENTS.join(', ')}\n`)
    expect(applyConnectPlan(plan)).toEqual([mcpPath(), hooksPath()])
    expect([read(mcpPath()), read(hooksPath())]).toEqual([USER_MCP, USER_HOOKS])
  })

  it('deletes files left with only what connect wrote (version), skips missing files', () => {
    connect()
    applyConnectPlan(planCursorDisconnect(base))
    expect(existsSync(mcpPath())).toBe(false)
    expect(existsSync(hooksPath())).toBe(false)
    write(hooksPath(), { version: 1, hooks: { stop: [{ command: 'mine' }] } })
    connect()
    applyConnectPlan(planCursorDisconnect(base))
    expect(readJson(hooksPath())).toEqual({ version: 1, hooks: { stop: [{ command: 'mine' }] } })
    expect(planCursorDisconnect(base).files.map((f) => f.path)).toEqual([hooksPath()])
  })
})
