import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { planClaudeCodeConnect } from './claude-code.js'
import { planCodexConnect } from './codex.js'
import { type AgentConnectOptions, applyConnectPlan } from './connect-plan.js'
import { planCursorConnect } from './cursor.js'
import { checkAgents, type DoctorFinding } from './doctor.js'
import { planGeminiConnect } from './gemini.js'
import { planOpenCodeConnect } from './opencode.js'

let root: string
let home: string
let cli: string
let opts: AgentConnectOptions
const NODE = process.execPath

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'mnemo-doctor-'))
  home = join(root, 'home')
  mkdirSync(home)
  cli = join(root, 'mnemo dist', 'adapters', 'cli', 'main.js')
  mkdirSync(join(root, 'mnemo dist', 'adapters', 'cli'), { recursive: true })
  writeFileSync(cli, '')
  opts = { scope: 'user', homeDir: home, projectDir: join(root, 'proj'), env: {}, nodePath: NODE, cliPath: cli }
})
afterEach(() => rmSync(root, { recursive: true, force: true }))

const check = (extra: Partial<Parameters<typeof checkAgents>[0]> = {}): DoctorFinding[] =>
  checkAgents({ homeDir: home, projectDir: join(root, 'proj'), env: {}, cliPath: cli, nodePath: NODE, ...extra })
const statusOf = (f: DoctorFinding[]): string[] => f.map((x) => `${x.agent}/${x.scope}:${x.status}`)
const of = (f: DoctorFinding[], agent: string, scope = 'user'): DoctorFinding => f.find((x) => x.agent === agent && x.scope === scope)!

describe('checkAgents', () => {
  it('reports every agent missing on an empty home, with the connect command as fix', () => {
    const f = check()
    expect(statusOf(f)).toEqual([
      'claude-code/user:missing',
      'codex/user:missing',
      'gemini/user:missing',
      'cursor/user:missing',
      'opencode/user:missing',
    ])
    expect(of(f, 'cursor')).toEqual({
      agent: 'cursor',
      scope: 'user',
      status: 'missing',
      detail: 'no configuration files',
      fix: 'mnemo connect cursor',
    })
  })

  it("reports ok after connect for each agent, and stale when Codex's trust records no longer match or OpenCode's plugin is gone", () => {
    applyConnectPlan(planClaudeCodeConnect(opts))
    for (const plan of [planCodexConnect(opts), planGeminiConnect(opts), planCursorConnect(opts), planOpenCodeConnect(opts)])
      applyConnectPlan(plan)
    let f = check()
    expect(statusOf(f)).toEqual(['claude-code/user:ok', 'codex/user:ok', 'gemini/user:ok', 'cursor/user:ok', 'opencode/user:ok'])
    expect(of(f, 'gemini').detail).toBe(`MCP server and 5 hooks registered in ${join(home, '.gemini', 'settings.json')}`)
    const pluginPath = join(home, '.config', 'opencode', 'plugins', 'mnemo.js')
    expect(of(f, 'opencode')).toMatchObject({
      status: 'ok',
      detail: `MCP server registered in ${join(home, '.config', 'opencode', 'opencode.json')}, ${pluginPath}`,
      fix: 'nothing to do',
    })
    // A hook edited after connect no longer matches the hash Codex was told to trust.
    const hooksJson = join(home, '.codex', 'hooks.json')
    writeFileSync(hooksJson, readFileSync(hooksJson, 'utf8').replace('"timeout": 10', '"timeout": 11'))
    rmSync(pluginPath)
    f = check()
    expect(of(f, 'codex')).toMatchObject({
      status: 'stale',
      detail: "Codex has no current trust record for mnemo's hooks (UserPromptSubmit), so it skips them",
      fix: 'mnemo connect codex',
    })
    expect(of(f, 'opencode')).toMatchObject({
      status: 'stale',
      detail: `mnemo's OpenCode plugin ${pluginPath} is missing, so nothing is captured`,
      fix: 'mnemo connect opencode',
    })
    applyConnectPlan(planCodexConnect(opts))
    applyConnectPlan(planOpenCodeConnect(opts))
    expect(statusOf(check())).toEqual(['claude-code/user:ok', 'codex/user:ok', 'gemini/user:ok', 'cursor/user:ok', 'opencode/user:ok'])
  })

  it('reports stale when the CLI moved, the node is gone, hooks are missing or MNEMO_HOME differs', () => {
    applyConnectPlan(planCursorConnect(opts))
    applyConnectPlan(planGeminiConnect({ ...opts, nodePath: join(root, 'gone', 'node') }))
    applyConnectPlan(planClaudeCodeConnect(opts))
    rmSync(join(home, '.claude', 'settings.json'))
    const moved = join(root, 'new', 'main.js')
    mkdirSync(join(root, 'new'))
    writeFileSync(moved, '')
    const f = check({ cliPath: moved, mnemoHome: '/data/m' })
    expect(of(f, 'cursor')).toMatchObject({ status: 'stale', fix: 'mnemo connect cursor' })
    expect(of(f, 'cursor').detail).toBe(
      `MCP entry runs ${cli}, this mnemo is ${moved}; MNEMO_HOME is unset in the MCP entry, expected /data/m; hooks for sessionStart, beforeSubmitPrompt, postToolUse, postToolUseFailure, subagentStop, afterAgentResponse, sessionEnd run another CLI than ${moved}`,
    )
    expect(of(f, 'gemini').detail.startsWith(`node ${join(root, 'gone', 'node')} does not exist`)).toBe(true)
    expect(of(f, 'claude-code').detail).toContain('hooks missing for SessionStart')
  })

  it("takes an install's main.js and its bin.cjs for the same CLI, and connect moves main.js hooks to the bin without doubling them", () => {
    // Connected by an earlier build: every entry names main.js. This build's CLI is bin.cjs beside it.
    for (const plan of [
      planClaudeCodeConnect(opts),
      planCodexConnect(opts),
      planGeminiConnect(opts),
      planCursorConnect(opts),
      planOpenCodeConnect(opts),
    ])
      applyConnectPlan(plan)
    const bin = join(root, 'mnemo dist', 'adapters', 'cli', 'bin.cjs')
    writeFileSync(bin, '')
    const all = ['claude-code/user:ok', 'codex/user:ok', 'gemini/user:ok', 'cursor/user:ok', 'opencode/user:ok']
    expect(statusOf(check({ cliPath: bin }))).toEqual(all)
    // Another install's bin is another CLI.
    const other = join(root, 'other', 'adapters', 'cli', 'bin.cjs')
    mkdirSync(join(root, 'other', 'adapters', 'cli'), { recursive: true })
    writeFileSync(other, '')
    expect(of(check({ cliPath: other }), 'cursor').detail).toContain(`MCP entry runs ${cli}, this mnemo is ${other}`)
    // Connecting again with the bin replaces every main.js command (one hook per event, as before) and keeps doctor ok.
    const settings = join(home, '.claude', 'settings.json')
    const before = (readFileSync(settings, 'utf8').match(/ hook /g) ?? []).length
    for (const plan of [
      planClaudeCodeConnect({ ...opts, cliPath: bin }),
      planCodexConnect({ ...opts, cliPath: bin }),
      planGeminiConnect({ ...opts, cliPath: bin }),
      planCursorConnect({ ...opts, cliPath: bin }),
      planOpenCodeConnect({ ...opts, cliPath: bin }),
    ])
      applyConnectPlan(plan)
    const after = readFileSync(settings, 'utf8')
    expect((after.match(/ hook /g) ?? []).length).toBe(before)
    expect(after).not.toContain('main.js')
    expect(after).toContain('bin.cjs')
    expect(statusOf(check({ cliPath: bin }))).toEqual(all)
  })

  it('reports broken files with the file in detail and fix', () => {
    mkdirSync(join(home, '.config', 'opencode'), { recursive: true })
    writeFileSync(join(home, '.config', 'opencode', 'opencode.json'), '{"mcp": ')
    mkdirSync(join(home, '.codex'))
    writeFileSync(join(home, '.codex', 'config.toml'), '[mcp_servers.mnemo\n')
    const f = check()
    const path = join(home, '.config', 'opencode', 'opencode.json')
    expect(of(f, 'opencode').status).toBe('broken')
    expect(of(f, 'opencode').detail).toContain(path)
    expect(of(f, 'opencode').fix).toBe(`fix or move aside ${path}, then run \`mnemo connect opencode\``)
    expect(of(f, 'codex').status).toBe('broken')
  })

  it('adds project-scope findings only for agents with project files', () => {
    applyConnectPlan(planCursorConnect({ ...opts, scope: 'project' }))
    const f = check()
    expect(statusOf(f)).toEqual([
      'claude-code/user:missing',
      'codex/user:missing',
      'gemini/user:missing',
      'cursor/user:ok',
      'cursor/project:ok',
      'opencode/user:missing',
    ])
    expect(of(check({ cliPath: join(root, 'x.js') }), 'cursor', 'project').fix).toBe('mnemo connect cursor --scope project')
  })

  it('does not suggest connecting a scope while the hooks are registered in the other one (connect refuses that)', () => {
    applyConnectPlan(planClaudeCodeConnect({ ...opts, scope: 'project' }))
    expect(of(check(), 'claude-code')).toEqual({
      agent: 'claude-code',
      scope: 'user',
      status: 'ok',
      detail: `not connected here; mnemo's hooks are registered in the project scope of ${join(root, 'proj')}, which the agent runs`,
      fix: 'nothing to do',
    })
    // A stray MCP entry at user scope, without hooks: the fix removes it rather than connecting.
    applyConnectPlan(planCursorConnect({ ...opts, scope: 'project' }))
    applyConnectPlan(planCursorConnect(opts))
    writeFileSync(join(home, '.cursor', 'hooks.json'), '{}\n')
    expect(of(check(), 'cursor')).toMatchObject({ status: 'stale', fix: 'mnemo disconnect cursor' })
  })
})
