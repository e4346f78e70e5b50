import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { MnemoError } from '../../../core/errors.js'
import { CLI, NODE, read, useConnectSandbox, write } from '../../../testing/connect-sandbox.js'
import { type AgentConnectOptions, applyConnectPlan, renderPlanDiff } from './connect-plan.js'
import { parseJsonQuiet } from './json-config.js'
import { describeOpenCodeHooks, openCodePaths, planOpenCodeConnect, planOpenCodeDisconnect } from './opencode.js'
import { openCodePluginSource } from './opencode-plugin.js'

let root: string
let home: string
let base: AgentConnectOptions
useConnectSandbox('mnemo-opencode-', (s) => ({ root, home, base } = s))

const dir = (): string => join(home, '.config', 'opencode')
const jsonPath = (): string => join(dir(), 'opencode.json')
const pluginPath = (): string => join(dir(), 'plugins', 'mnemo.js')
const connect = (extra: Partial<AgentConnectOptions> = {}) => {
  const plan = planOpenCodeConnect({ ...base, ...extra })
  return { plan, written: applyConnectPlan(plan) }
}
const entry = { type: 'local', command: [NODE, CLI, 'mcp', '--agent', 'opencode'], enabled: true }

const USER_JSONC = `{
  "$schema": "https://opencode.ai/config.json",
  // my model
  "model": "anthropic/claude-sonnet-4-5",
  "mcp": {
    "context7": { "type": "remote", "url": "https://mcp.context7.com/mcp" },
  },
  "tools": { "context7*": false },
}
`

describe('planOpenCodeConnect', () => {
  it('fresh install writes opencode.json with $schema and the local server', () => {
    const { plan, written } = connect()
    expect(written).toEqual([jsonPath(), pluginPath()])
    expect(plan.files.map((f) => [f.kind, f.before, f.changed])).toEqual([
      ['mcp', undefined, true],
      ['settings', undefined, true],
    ])
    expect(read(jsonPath())).toBe(`${JSON.stringify({ $schema: 'https://opencode.ai/config.json', mcp: { mnemo: entry } }, null, 2)}\n`)
    expect(read(pluginPath())).toBe(openCodePluginSource({ nodePath: NODE, cliPath: CLI, mnemoHome: undefined }))
    expect(renderPlanDiff(plan)).toContain(`${jsonPath()} (create)\n  mcp servers added: mnemo\n`)
    expect(renderPlanDiff(plan)).toContain(`${pluginPath()} (create)\n  plugin added: mnemo\n`)
  })

  it('writes MNEMO_HOME as environment', () => {
    connect({ mnemoHome: '/data/mnemo home' })
    expect(JSON.parse(read(jsonPath())).mcp.mnemo).toEqual({ ...entry, environment: { MNEMO_HOME: '/data/mnemo home' } })
  })

  it('edits an existing opencode.jsonc, keeping comments, trailing commas and order; idempotent', () => {
    const jsonc = join(dir(), 'opencode.jsonc')
    write(jsonc, USER_JSONC)
    expect(openCodePaths(base).configPath).toBe(jsonc)
    connect()
    const text = read(jsonc)
    const lines = USER_JSONC.split('\n')
    const mnemo = JSON.stringify({ mnemo: entry }, null, 2)
      .split('\n')
      .slice(1, -1)
      .map((l) => `  ${l}`)
    expect(text).toBe(
      [...lines.slice(0, 6), `${mnemo[0]}`, ...mnemo.slice(1, -1), `${mnemo[mnemo.length - 1]},`, ...lines.slice(6)].join('\n'),
    )
    expect(Object.keys(parseJsonQuiet(text).mcp as object)).toEqual(['context7', 'mnemo'])
    const { plan, written } = connect()
    expect(plan.files.map((f) => [f.changed, f.after])).toEqual([
      [false, text],
      [false, read(pluginPath())],
    ])
    expect(written).toEqual([])
  })

  it('uses mcp.servers in a file already in the OpenCode 2 shape', () => {
    write(jsonPath(), `${JSON.stringify({ mcp: { servers: { gh: { type: 'remote', url: 'https://mcp.grep.app' } } } }, null, 2)}\n`)
    connect()
    const mcp = JSON.parse(read(jsonPath())).mcp
    expect(mcp).toEqual({
      servers: {
        gh: { type: 'remote', url: 'https://mcp.grep.app' },
        mnemo: { type: 'local', command: [NODE, CLI, 'mcp', '--agent', 'opencode'] },
      },
    })
  })

  it('paths with spaces, quotes, backslashes and $ are stored verbatim; {env: and {file: are refused', () => {
    const node = '/a b/"q"/\\x/$HOME/node'
    connect({ nodePath: node })
    expect(JSON.parse(read(jsonPath())).mcp.mnemo.command).toEqual([node, CLI, 'mcp', '--agent', 'opencode'])
    for (const cliPath of ['/x/{env:HOME}/main.js', '/x/{file:~/a}/main.js']) {
      try {
        planOpenCodeConnect({ ...base, cliPath })
        throw new Error('expected INVALID_INPUT')
      } catch (err) {
        expect(MnemoError.is(err, 'INVALID_INPUT')).toBe(true)
        expect((err as MnemoError<'INVALID_INPUT'>).details.path).toBe('cliPath')
      }
    }
  })

  it('refuses invalid JSON and a non-object mcp without touching the file', () => {
    for (const text of ['{"mcp": {', '{"mcp": []}\n', '"x"\n']) {
      write(jsonPath(), text)
      try {
        planOpenCodeConnect(base)
        throw new Error('expected INVALID_INPUT')
      } catch (err) {
        expect(MnemoError.is(err, 'INVALID_INPUT')).toBe(true)
        expect((err as MnemoError<'INVALID_INPUT'>).details.path).toBe(jsonPath())
        expect((err as Error).message).toContain(jsonPath())
      }
      expect(read(jsonPath())).toBe(text)
    }
  })

  it('honours XDG_CONFIG_HOME and the project scope; has no hooks', () => {
    const xdg = join(root, 'xdg')
    expect(openCodePaths({ ...base, env: { XDG_CONFIG_HOME: xdg } }).configPath).toBe(join(xdg, 'opencode', 'opencode.json'))
    expect(connect({ scope: 'project' }).written).toEqual([
      join(root, 'proj', 'opencode.json'),
      join(root, 'proj', '.opencode', 'plugins', 'mnemo.js'),
    ])
    expect(describeOpenCodeHooks()).toMatchObject({ agent: 'opencode', supported: true })
    expect(describeOpenCodeHooks().events.map((e) => e.mnemoEvent)).toEqual([
      'SessionStart',
      'UserPromptSubmit',
      'PreToolUse',
      'PostToolUse',
      'Stop',
      'SessionEnd',
    ])
  })
})

describe('planOpenCodeDisconnect', () => {
  it('removes only mnemo and restores the previous bytes', () => {
    const jsonc = join(dir(), 'opencode.jsonc')
    write(jsonc, USER_JSONC)
    connect()
    const plan = planOpenCodeDisconnect(base)
    expect(renderPlanDiff(plan)).toContain('  mcp servers removed: mnemo\n')
    expect(renderPlanDiff(plan)).toContain(`remove ${pluginPath()}\n  plugin removed: mnemo\n`)
    applyConnectPlan(plan)
    expect(read(jsonc)).toBe(USER_JSONC)
    expect(existsSync(pluginPath())).toBe(false)
  })

  it('never overwrites or removes a plugins/mnemo.js that mnemo did not write', () => {
    write(pluginPath(), 'export const Mine = async () => ({})\n')
    for (const plan of [() => planOpenCodeConnect(base), () => planOpenCodeDisconnect(base)]) {
      try {
        plan()
        throw new Error('expected INVALID_INPUT')
      } catch (err) {
        expect(MnemoError.is(err, 'INVALID_INPUT') && err.details.path).toBe(pluginPath())
      }
    }
    expect(read(pluginPath())).toBe('export const Mine = async () => ({})\n')
  })

  it('drops an emptied mcp (V1 and V2 shapes) and skips a missing file', () => {
    connect()
    applyConnectPlan(planOpenCodeDisconnect(base))
    expect(existsSync(jsonPath())).toBe(false)
    write(jsonPath(), `${JSON.stringify({ mcp: { servers: { mnemo: { type: 'local', command: ['x'] } } }, model: 'm' }, null, 2)}\n`)
    applyConnectPlan(planOpenCodeDisconnect(base))
    expect(JSON.parse(read(jsonPath()))).toEqual({ model: 'm' })
    rmSync(jsonPath())
    expect(planOpenCodeDisconnect(base).files).toEqual([])
  })
})
