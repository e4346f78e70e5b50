import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import type { HookAgent } from '../core/types.js'
import { createTestEngine, tempDir } from '../testing/test-mnemo.js'

/**
 * The real agents' hook payloads and session files (fixtures/agents/<agent>/capture-*, captured from Claude Code
 * 2.1.197, Codex CLI 0.171.0 and Gemini CLI 0.61.0 driving mnemo, machine paths replaced) through capture and import,
 * checked by what a user then sees: observations, session titles and the context block.
 */
const dir = fileURLToPath(new URL('../../fixtures/agents/', import.meta.url))
const fixture = (name: string): string => readFileSync(path.join(dir, name), 'utf8')
const PROJECT = '/nonexistent/mnemo-fixture'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

function engineFor() {
  const t = createTestEngine({ cwd: '/work/elsewhere' })
  cleanups.push(() => t.engine.close())
  return t
}

/** Every observation text of every project, oldest first. */
async function observations(engine: ReturnType<typeof engineFor>['engine']): Promise<{ kind: string; text: string }[]> {
  const projectIds = (await engine.listProjects()).map((p) => p.id)
  if (projectIds.length === 0) return []
  return (await engine.browseObservations({ projectIds, order: 'asc', limit: 500 })).map((o) => ({ kind: o.kind, text: o.text }))
}

function hook(engine: ReturnType<typeof engineFor>['engine'], event: string, file: string, agent: HookAgent) {
  return engine.captureHook(event, fixture(file), agent)
}

describe('Gemini CLI 0.61 hooks (D1–D4)', () => {
  it('D1: the BeforeAgent prompt is stored without mnemo’s <hook_context> block, title and context too', async () => {
    const { engine } = engineFor()
    await hook(engine, 'BeforeAgent', 'gemini/capture-beforeagent-nested-context.json', 'gemini')
    const obs = await observations(engine)
    expect(obs).toEqual([{ kind: 'prompt', text: 'RECALLTEST: what did we do in the last session? Use the memory recall tool.' }])
    expect((await engine.sessions()).map((s) => s.title)).toEqual([
      'RECALLTEST: what did we do in the last session? Use the memory recall tool.',
    ])
    const block = (await engine.context({ project: await engine.projectForPath(`${PROJECT}/proj-gemini`) })).text
    expect(block).toContain('Asked: RECALLTEST')
    expect(block).not.toMatch(/hook_context|&lt;mnemo-context/)
  })

  it('D2: AfterAgent’s prompt_response is the final answer', async () => {
    const { engine } = engineFor()
    await hook(engine, 'BeforeAgent', 'gemini/capture-beforeagent-first.json', 'gemini')
    await hook(engine, 'AfterAgent', 'gemini/capture-afteragent.json', 'gemini')
    const obs = await observations(engine)
    expect(obs.map((o) => o.kind)).toEqual(['prompt', 'message'])
    expect(obs[0]!.text).toBe('Please write the word zanzibarquokka into notes.txt in this project.')
    expect(obs[1]!.text).toMatch(/^Final answer: done\./)
    expect((await engine.context({ project: await engine.projectForPath(`${PROJECT}/proj-gemini`) })).text).toContain(
      'Last: Final answer: done.',
    )
  })

  it('D3: a call of mcp_mnemo_memory_recall is not captured', async () => {
    const { engine } = engineFor()
    const r = await hook(engine, 'AfterTool', 'gemini/capture-aftertool-mnemo-recall.json', 'gemini')
    expect(r.stored).toBe(false)
    expect(r.skipped).toBe('own tool mcp_mnemo_memory_recall')
    expect((await engine.stats()).events).toBe(0)
  })

  it('D4: shell output is stored without <untrusted_context> and the process-group line', async () => {
    const { engine } = engineFor()
    await hook(engine, 'AfterTool', 'gemini/capture-aftertool-shell.json', 'gemini')
    expect(await observations(engine)).toEqual([
      {
        kind: 'tool',
        text: 'run_shell_command: echo zanzibarquokka > notes.txt && cat notes.txt\nWrite the word to notes.txt\n→ zanzibarquokka',
      },
    ])
  })
})

describe('Codex CLI 0.171 and Claude Code 2.1.197 hooks', () => {
  it('their mcp__mnemo__memory_recall calls are not captured; ordinary calls and answers are', async () => {
    const { engine } = engineFor()
    expect((await hook(engine, 'PostToolUse', 'codex/capture-posttooluse-mnemo-recall.json', 'codex')).stored).toBe(false)
    expect((await hook(engine, 'PostToolUse', 'claude-code/capture-posttooluse-mnemo-recall.json', 'claude-code')).stored).toBe(false)
    await hook(engine, 'PostToolUse', 'codex/capture-posttooluse-shell.json', 'codex')
    await hook(engine, 'Stop', 'codex/capture-stop.json', 'codex')
    expect((await observations(engine)).map((o) => o.kind)).toEqual(['tool', 'message'])
    expect((await observations(engine))[0]!.text).toBe('Bash: echo zanzibarquokka > notes.txt && cat notes.txt\n→ zanzibarquokka')
  })
})

describe('import of the current session formats (D5, D6)', () => {
  it('D5: a Codex 0.171 rollout gives its prompt, tool call, output (header taken off) and answer, each once', async () => {
    const { engine } = engineFor()
    const t = tempDir()
    cleanups.push(t.cleanup)
    const file = path.join(t.dir, 'rollout-2026-12-01T20-36-57-01a23353-262b-7dc1-abc7-a0875660bb6a.jsonl')
    cpSync(path.join(dir, 'codex/capture-rollout-0.171.jsonl'), file)
    const report = await engine.importPath(file)
    expect(report.files[0]!.format).toBe('codex')
    expect(await observations(engine)).toEqual([
      { kind: 'prompt', text: 'Please write the word zanzibarquokka into notes.txt in this project.' },
      { kind: 'tool', text: 'exec_command: echo zanzibarquokka > notes.txt && cat notes.txt' },
      { kind: 'tool_result', text: 'zanzibarquokka' },
      {
        kind: 'message',
        text: 'Final answer: done. The tool said: Chunk ID: 7861a4 Wall time: 0.0000 seconds Process exited with code 0 Original token count: 4 Output: zanzibarquokka',
      },
    ])
    // A second import adds nothing.
    await engine.importPath(file)
    expect(await observations(engine)).toHaveLength(4)
  })

  it('D6: a Gemini 0.61 JSONL session (header, messages, $set lines) imports under the project its .project_root names', async () => {
    const { engine } = engineFor()
    const t = tempDir()
    cleanups.push(t.cleanup)
    const root = path.join(t.dir, 'proj-gemini')
    mkdirSync(root)
    const chats = path.join(t.dir, 'gemini-tmp', 'proj-gemini', 'chats')
    mkdirSync(chats, { recursive: true })
    const file = path.join(chats, 'session-2026-12-01T20-38-45569d69.jsonl')
    // The recorded projectHash is the SHA-256 of the folder it was recorded in: point the fixture at this one.
    const { createHash } = await import('node:crypto')
    writeFileSync(
      file,
      fixture('gemini/capture-session-0.61.jsonl').replace(
        /"projectHash":"[0-9a-f]+"/,
        `"projectHash":"${createHash('sha256').update(root).digest('hex')}"`,
      ),
    )
    writeFileSync(path.join(t.dir, 'gemini-tmp', 'proj-gemini', '.project_root'), `${root}\n`)
    const report = await engine.importPath(path.join(t.dir, 'gemini-tmp'))
    expect(report.files.map((f) => [f.format, f.error])).toEqual([['gemini', undefined]])
    expect((await engine.listProjects()).map((p) => p.root)).toEqual([root])
    expect(await observations(engine)).toEqual([
      { kind: 'prompt', text: 'Please write the word zanzibarquokka into notes.txt in this project.' },
      { kind: 'tool', text: 'run_shell_command: echo zanzibarquokka > notes.txt && cat notes.txt\nWrite the word to notes.txt' },
      { kind: 'tool_result', text: 'zanzibarquokka' },
      {
        kind: 'message',
        text: 'Final answer: done. The tool said: {"output":"<untrusted_context>\\nOutput: zanzibarquokka\\nProcess Group PGID: 17530\\n</untrusted_context>"}',
      },
    ])
  })
})
