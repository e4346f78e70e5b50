import { existsSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { read, useConnectSandbox, write } from '../../../testing/connect-sandbox.js'
import { planCodexConnect, planCodexDisconnect } from './codex.js'
import {
  type AgentConnectOptions,
  type AgentDisconnectOptions,
  applyConnectPlan,
  type ConnectPlan,
  renderPlanDiff,
} from './connect-plan.js'
import { planCursorConnect, planCursorDisconnect } from './cursor.js'
import { planGeminiConnect, planGeminiDisconnect } from './gemini.js'
import { planOpenCodeConnect, planOpenCodeDisconnect } from './opencode.js'

// connect → disconnect leaves no file connect created; a file with the user's own entries keeps them (issue 17 item 19).
let home: string
let base: AgentConnectOptions
useConnectSandbox('mnemo-cleanup-', (s) => ({ home, base } = s))

const AGENTS: Record<string, [(o: AgentConnectOptions) => ConnectPlan, (o: AgentDisconnectOptions) => ConnectPlan]> = {
  codex: [planCodexConnect, planCodexDisconnect],
  cursor: [planCursorConnect, planCursorDisconnect],
  gemini: [planGeminiConnect, planGeminiDisconnect],
  opencode: [planOpenCodeConnect, planOpenCodeDisconnect],
}
const files = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => relative(dir, join(d.parentPath, d.name)))
    .sort()

describe('disconnect deletes the files connect created and left empty', () => {
  it('connect then disconnect of every agent in a fresh HOME leaves no file behind', () => {
    for (const [connect] of Object.values(AGENTS)) applyConnectPlan(connect(base))
    const created = files(home)
    expect(created).toEqual(expect.arrayContaining(['.codex/config.toml', '.codex/hooks.json', '.cursor/hooks.json', '.cursor/mcp.json']))
    for (const [, disconnect] of Object.values(AGENTS)) {
      const plan = disconnect(base)
      for (const f of plan.files) expect(renderPlanDiff({ ...plan, files: [f] })).toContain(`remove ${f.path}`)
      applyConnectPlan(plan)
    }
    expect(files(home)).toEqual([])
  })

  it('keeps a file holding the user’s own entries, with only mnemo’s removed', () => {
    const toml = join(home, '.codex', 'config.toml')
    const cursorMcp = join(home, '.cursor', 'mcp.json')
    const cursorHooks = join(home, '.cursor', 'hooks.json')
    write(toml, 'model = "o3"\n')
    write(cursorMcp, { mcpServers: { other: { command: 'x' } } })
    write(cursorHooks, '{\n  // mine\n  "version": 1\n}\n')
    for (const agent of ['codex', 'cursor'] as const) applyConnectPlan(AGENTS[agent]![0](base))
    expect(read(toml)).toContain('mnemo')
    for (const agent of ['codex', 'cursor'] as const) applyConnectPlan(AGENTS[agent]![1](base))
    expect(read(toml)).toBe('model = "o3"\n')
    expect(JSON.parse(read(cursorMcp))).toEqual({ mcpServers: { other: { command: 'x' } } })
    expect(read(cursorHooks)).toContain('// mine')
    expect(read(cursorHooks)).not.toContain('mnemo')
    // Codex's hooks.json was created by connect: it goes.
    expect(existsSync(join(home, '.codex', 'hooks.json'))).toBe(false)
  })

  it('never deletes an empty file that held no mnemo entry', () => {
    const mcp = join(home, '.cursor', 'mcp.json')
    write(mcp, '{}\n')
    applyConnectPlan(planCursorDisconnect(base))
    expect(read(mcp)).toBe('{}\n')
  })
})
