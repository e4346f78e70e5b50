import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { OPENCODE_PLUGIN_MARKER, isMnemoOpenCodePlugin, openCodePluginSource } from './opencode-plugin.js'

type Hooks = Record<string, (input: unknown, output?: unknown) => Promise<void>>
type PluginFn = (input: { directory: string; worktree: string }) => Promise<Hooks>

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mnemo-oc-plugin-'))
})
afterEach(() => {
  rmSync(dir, { recursive: true, force: true })
})

/**
 * A stand-in for the mnemo CLI: appends `{argv, env MNEMO_HOME, stdin}` to a
 * log and answers SessionStart as `mnemo hook` does.
 */
function fakeCli(): { cli: string; calls: () => Array<{ argv: string[]; home: string | null; payload: Record<string, unknown> }> } {
  const log = join(dir, 'calls.jsonl')
  const cli = join(dir, 'fake-cli.mjs')
  writeFileSync(
    cli,
    `import { appendFileSync } from 'node:fs'
let s = ''
process.stdin.on('data', (d) => { s += d }).on('end', () => {
  appendFileSync(${JSON.stringify(log)}, JSON.stringify({ argv: process.argv.slice(2), home: process.env.MNEMO_HOME ?? null, payload: JSON.parse(s) }) + '\\n')
  if (process.argv[3] === 'SessionStart') process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: '<mnemo-context>earlier work</mnemo-context>' } }))
})
`,
  )
  return {
    cli,
    calls: () =>
      readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { argv: string[]; home: string | null; payload: Record<string, unknown> }),
  }
}

async function loadPlugin(source: string): Promise<PluginFn> {
  const file = join(dir, 'mnemo.js')
  writeFileSync(file, source)
  const mod = (await import(pathToFileURL(file).href)) as { MnemoPlugin: PluginFn }
  return mod.MnemoPlugin
}

describe('openCodePluginSource', () => {
  it('is recognised by its first line and is the same text for the same command', () => {
    const src = openCodePluginSource({ nodePath: '/n', cliPath: '/c "q".js', mnemoHome: undefined })
    expect(src.startsWith(OPENCODE_PLUGIN_MARKER)).toBe(true)
    expect(isMnemoOpenCodePlugin(src)).toBe(true)
    expect(isMnemoOpenCodePlugin('export const X = 1')).toBe(false)
    expect(src).toBe(openCodePluginSource({ nodePath: '/n', cliPath: '/c "q".js', mnemoHome: undefined }))
    expect(src).toContain('const CLI = "/c \\"q\\".js"')
  })

  it("turns OpenCode's hooks into mnemo hook runs in order, and puts the SessionStart block into the system prompt", async () => {
    const { cli, calls } = fakeCli()
    const plugin = await loadPlugin(openCodePluginSource({ nodePath: process.execPath, cliPath: cli, mnemoHome: join(dir, 'home') }))
    const hooks = await plugin({ directory: '/work/proj', worktree: '/work/proj' })
    const sid = 'ses_1'
    await hooks.event!({ event: { type: 'session.created', properties: { info: { id: sid } } } })
    const system: string[] = ['You are opencode.']
    await hooks['experimental.chat.system.transform']!({ sessionID: sid }, { system })
    await hooks['chat.message']!(
      { sessionID: sid },
      {
        message: {},
        parts: [
          { type: 'text', text: 'write notes.txt' },
          { type: 'text', text: 'ignored', synthetic: true },
        ],
      },
    )
    await hooks['tool.execute.before']!({ tool: 'bash', sessionID: sid, callID: 'call_1' }, { args: { command: 'ls' } })
    await hooks['tool.execute.after']!(
      { tool: 'bash', sessionID: sid, callID: 'call_1', args: { command: 'ls' } },
      { title: 'ls', output: 'notes.txt\n', metadata: {} },
    )
    await hooks.event!({ event: { type: 'message.updated', properties: { info: { id: 'msg_a', role: 'assistant' } } } })
    await hooks.event!({
      event: { type: 'message.part.updated', properties: { part: { type: 'text', messageID: 'msg_a', sessionID: sid, text: 'Done.' } } },
    })
    await hooks.event!({ event: { type: 'session.idle', properties: { sessionID: sid } } })
    // The system prompt gets the block once, however often the transform runs.
    await hooks['experimental.chat.system.transform']!({ sessionID: sid }, { system })
    await hooks.event!({ event: { type: 'session.deleted', properties: { info: { id: sid } } } })
    expect(system).toEqual(['You are opencode.', '<mnemo-context>earlier work</mnemo-context>'])
    // Stop and SessionEnd run detached (OpenCode does not wait for them): wait for their records.
    for (let i = 0; i < 200 && (!existsSync(join(dir, 'calls.jsonl')) || calls().length < 6); i++)
      await new Promise((r) => setTimeout(r, 50))
    // The two detached runs may finish in either order: compare them sorted after the four in-order ones.
    const raw = calls()
    const got = [
      ...raw.slice(0, 4),
      ...raw.slice(4).sort((a, b) => ['Stop', 'SessionEnd'].indexOf(a.argv[1]!) - ['Stop', 'SessionEnd'].indexOf(b.argv[1]!)),
    ]
    expect(got.map((c) => c.argv)).toEqual(
      ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'SessionEnd'].map((e) =>
        [cli, 'hook', e, '--agent', 'opencode'].slice(1),
      ),
    )
    expect(new Set(got.map((c) => c.home))).toEqual(new Set([join(dir, 'home')]))
    const base = { session_id: sid, cwd: '/work/proj' }
    expect(got.map((c) => c.payload)).toEqual([
      { ...base, hook_event_name: 'SessionStart', source: 'startup' },
      { ...base, hook_event_name: 'UserPromptSubmit', prompt: 'write notes.txt' },
      { ...base, hook_event_name: 'PreToolUse', tool_name: 'bash', tool_input: { command: 'ls' }, tool_use_id: 'call_1' },
      {
        ...base,
        hook_event_name: 'PostToolUse',
        tool_name: 'bash',
        tool_input: { command: 'ls' },
        tool_use_id: 'call_1',
        tool_response: 'notes.txt\n',
      },
      { ...base, hook_event_name: 'Stop', last_assistant_message: 'Done.' },
      { ...base, hook_event_name: 'SessionEnd', reason: 'deleted' },
    ])
  })

  it('never throws into OpenCode when the CLI cannot run', async () => {
    const plugin = await loadPlugin(
      openCodePluginSource({ nodePath: join(dir, 'no-such-node'), cliPath: join(dir, 'no-cli.js'), mnemoHome: undefined }),
    )
    const hooks = await plugin({ directory: dir, worktree: dir })
    const system: string[] = []
    await hooks['chat.message']!({ sessionID: 's' }, { parts: [{ type: 'text', text: 'hi' }] })
    await hooks['experimental.chat.system.transform']!({ sessionID: 's' }, { system })
    await hooks.event!({ event: { type: 'session.idle', properties: { sessionID: 's' } } })
    expect(system).toEqual([])
  })
})
