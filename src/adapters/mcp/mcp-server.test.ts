import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { describe, expect, it } from 'vitest'
import { createTestEngine, hookPayload } from '../../testing/test-mnemo.js'
import { createMcpServer } from './mcp-server.js'

describe('memory_timeline', () => {
  it('pages a session of the project in time order, and hides another project’s session', async () => {
    const { engine, clock } = createTestEngine({ cwd: '/work/demo-app' })
    for (let i = 0; i < 5; i++) {
      await engine.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: `step ${i}` }))
      clock.advance(1000)
    }
    await engine.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'elsewhere' }, 'other', '/work/other-app'))
    const [mine, theirs] = [
      (await engine.sessions()).find((s) => s.sessionKey === 'sess-1')!,
      (await engine.sessions()).find((s) => s.sessionKey === 'other')!,
    ]
    const server = createMcpServer(engine, '/work/demo-app')
    const [a, b] = InMemoryTransport.createLinkedPair()
    await server.connect(a)
    const client = new Client({ name: 't', version: '0' })
    await client.connect(b)
    const page = (await client.callTool({ name: 'memory_timeline', arguments: { session: mine.id, offset: 1, limit: 2 } }))
      .structuredContent as { total: number; observations: { text: string }[] }
    expect(page.total).toBe(5)
    expect(page.observations.map((o) => o.text)).toEqual(['step 1', 'step 2'])
    const foreign = await client.callTool({ name: 'memory_timeline', arguments: { session: theirs.id } })
    expect(foreign.isError).toBe(true)
    await client.close()
  })
})

describe('memory_context', () => {
  it('caps one long memory to its share of the block and stays well-formed with astral text', async () => {
    const { engine, clock } = createTestEngine({ cwd: '/work/demo-app' })
    const long = (
      await engine.remember(`Build log 🔴: ${'👨‍👩‍👧 step ok; '.repeat(600)}`, {
        project: { root: '/work/demo-app', name: 'demo-app' },
      })
    ).memory
    clock.advance(1000)
    const short = (await engine.remember('we deploy with the release script', { project: { root: '/work/demo-app', name: 'demo-app' } }))
      .memory
    const server = createMcpServer(engine, '/work/demo-app')
    const [a, b] = InMemoryTransport.createLinkedPair()
    await server.connect(a)
    const client = new Client({ name: 't', version: '0' })
    await client.connect(b)
    const block = (await client.callTool({ name: 'memory_context', arguments: { budget: 400 } })).structuredContent as {
      tokens: number
      text: string
    }
    expect(block.tokens).toBeLessThanOrEqual(400)
    expect(block.text.isWellFormed()).toBe(true)
    expect(block.text).toContain(`(cut; memory_show ${long.id})`)
    expect(block.text).toContain('we deploy with the release script')
    expect(short.id).toMatch(/^mem_/)
    await client.close()
  })
})

describe('memory_forget', () => {
  it('returns the version that is current again after the newest is forgotten, and chain: true forgets every version', async () => {
    const { engine } = createTestEngine({ cwd: '/work/demo-app' })
    const v18 = (await engine.remember('Node version is 18', { project: { root: '/work/demo-app', name: 'demo-app' } })).memory
    const v20 = (await engine.remember('Node version is 20', { project: { root: '/work/demo-app', name: 'demo-app' } })).memory
    const server = createMcpServer(engine, '/work/demo-app')
    const [a, b] = InMemoryTransport.createLinkedPair()
    await server.connect(a)
    const client = new Client({ name: 't', version: '0' })
    await client.connect(b)
    const one = (await client.callTool({ name: 'memory_forget', arguments: { id: v20.id } })).structuredContent as {
      forgotten: { restored?: { id: string; text: string } }
    }
    expect(one.forgotten.restored).toEqual({ id: v18.id, text: 'Node version is 18' })
    const v22 = (await engine.remember('Node version is 22', { project: { root: '/work/demo-app', name: 'demo-app' } })).memory
    expect(v22.supersedes).toBe(v18.id)
    const all = (await client.callTool({ name: 'memory_forget', arguments: { id: v22.id, chain: true } })).structuredContent as {
      forgotten: { versions?: string[]; restored?: unknown }
    }
    expect(all.forgotten).toMatchObject({ versions: [v18.id, v22.id] })
    expect(all.forgotten.restored).toBeUndefined()
    expect(await engine.currentMemories(v18.projectId)).toEqual([])
    await client.close()
  })
})

describe('beforeRequest', () => {
  it('runs before each tool call, resource read and prompt, so a spooled tool event is recalled in the same turn', async () => {
    const { engine } = createTestEngine({ cwd: '/work/demo-app' })
    // What the drain stores: a tool event a hook deferred (its spool file) while the server was running.
    const waiting = [
      hookPayload('PostToolUse', {
        tool_name: 'Bash',
        tool_input: { command: 'make quokkabuild' },
        tool_response: 'ok',
        tool_use_id: 't1',
      }),
    ]
    const calls: string[] = []
    const server = createMcpServer(engine, '/work/demo-app', {
      beforeRequest: async () => {
        calls.push('drain')
        for (const stdin of waiting.splice(0)) await engine.captureHook('PostToolUse', stdin)
      },
    })
    const [a, b] = InMemoryTransport.createLinkedPair()
    await server.connect(a)
    const client = new Client({ name: 't', version: '0' })
    await client.connect(b)
    const found = (await client.callTool({ name: 'memory_recall', arguments: { query: 'quokkabuild' } })).structuredContent as {
      hits: { snippet: string }[]
    }
    expect(found.hits.map((h) => h.snippet).join(' ')).toContain('quokkabuild')
    await client.listTools()
    expect(calls).toEqual(['drain'])
    await client.getPrompt({ name: (await client.listPrompts()).prompts[0]!.name, arguments: {} }).catch(() => undefined)
    expect(calls).toEqual(['drain', 'drain'])
    await client.close()
  })

  it('answers from what is stored when the drain fails', async () => {
    const { engine } = createTestEngine({ cwd: '/work/demo-app' })
    const server = createMcpServer(engine, '/work/demo-app', {
      beforeRequest: async () => {
        throw new Error('disk gone')
      },
    })
    const [a, b] = InMemoryTransport.createLinkedPair()
    await server.connect(a)
    const client = new Client({ name: 't', version: '0' })
    await client.connect(b)
    const result = await client.callTool({ name: 'memory_recall', arguments: { query: 'anything' } })
    expect(result.isError).toBeFalsy()
    await client.close()
  })
})
