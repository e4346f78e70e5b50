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
  if (process.argv[3] === 'UserPromptSubmit' && JSON.parse(s).prompt.includes('rate-limit')) process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: '<mnemo-recall>\\n- token bucket\\n</mnemo-recall>' } }))
  if (process.argv[3] === 'PostToolUse' && JSON.parse(s).tool_input.filePath === 'src/a.ts') process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: '<mnemo-recall>\\n- a.ts keeps cents\\n</mnemo-recall>' } }))
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

  it("adds the per-prompt block to the user's message as a synthetic part after its own, and file hints after the tool's output", async () => {
    const { cli } = fakeCli()
    const plugin = await loadPlugin(openCodePluginSource({ nodePath: process.execPath, cliPath: cli, mnemoHome: join(dir, 'home') }))
    const hooks = await plugin({ directory: '/work/proj', worktree: '/work/proj' })
    const sid = 'ses_2'
    // Part ids as OpenCode 1.x makes them: prt_, 12 hex digits of ms × 4096 + counter, 14 base62 characters.
    const own = { id: 'prt_ffffffffff00AAAAAAAAAAAAAA', messageID: 'msg_u', sessionID: sid, type: 'text', text: 'how do we rate-limit?' }
    const output = { message: { id: 'msg_u' }, parts: [own] as Array<Record<string, unknown>> }
    await hooks['chat.message']!({ sessionID: sid }, output)
    expect(output.parts).toHaveLength(2)
    const added = output.parts[1]!
    expect(added).toMatchObject({
      messageID: 'msg_u',
      sessionID: sid,
      type: 'text',
      synthetic: true,
      text: '<mnemo-recall>\n- token bucket\n</mnemo-recall>',
    })
    // OpenCode orders a message's parts by id: the block must sort after the user's words, even one made in a later ms.
    expect(added['id']).toMatch(/^prt_[0-9a-f]{12}[0-9A-Za-z]{14}$/)
    expect(String(added['id']) > own.id).toBe(true)
    // A prompt nothing is recalled for leaves the message as it was.
    const plain = { message: { id: 'msg_v' }, parts: [{ ...own, id: 'prt_000000000001AAAAAAAAAAAAAA', text: 'thanks' }] }
    await hooks['chat.message']!({ sessionID: sid }, plain)
    expect(plain.parts).toHaveLength(1)
    const read = { title: 'a.ts', output: 'export const a = 1\n', metadata: {} }
    await hooks['tool.execute.after']!({ tool: 'read', sessionID: sid, callID: 'c1', args: { filePath: 'src/a.ts' } }, read)
    expect(read.output).toBe('export const a = 1\n\n\n<mnemo-recall>\n- a.ts keeps cents\n</mnemo-recall>')
    const other = { title: 'b.ts', output: 'b', metadata: {} }
    await hooks['tool.execute.after']!({ tool: 'read', sessionID: sid, callID: 'c2', args: { filePath: 'src/b.ts' } }, other)
    expect(other.output).toBe('b')
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
