import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { estimateTokens } from '../../core/text.js'
import type { ParsedJson } from '../../testing/json.js'

// End to end over stdio: the official MCP SDK client talks to the built CLI's
// `mnemo mcp`, started the way an agent starts it (in the project folder).
const ROOT = path.resolve(import.meta.dirname, '../../..')
const CLI = path.join(ROOT, 'dist/adapters/cli/main.js')
const TOOLS = [
  'facts_declare',
  'facts_delete',
  'facts_query',
  'facts_record',
  'facts_schema',
  'facts_state',
  'facts_state_resolve',
  'facts_state_set',
  'facts_update',
  'memory_context',
  'memory_export',
  'memory_forget',
  'memory_recall',
  'memory_remember',
  'memory_sessions',
  'memory_show',
  'memory_status',
  'memory_timeline',
]

let tmp: string
let home: string
let project: string
let otherProject: string
let client: Client
let transport: StdioClientTransport
let serverStderr = ''

/** Runs the built CLI once (to seed data the way a user would). */
function mnemo(args: string[], cwd: string = project): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, MNEMO_HOME: home }, encoding: 'utf8' })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult
}

function textOf(result: CallToolResult): string {
  expect(result.content).toHaveLength(1)
  const first = result.content[0]
  if (first?.type !== 'text') throw new Error(`expected one text content, got ${JSON.stringify(result.content)}`)
  return first.text
}

/** A successful result: not an error, and its text is the JSON of its structured content. */
function okDoc(result: CallToolResult): ParsedJson {
  expect(result.isError ?? false, textOf(result)).toBe(false)
  const doc = JSON.parse(textOf(result))
  expect(result.structuredContent).toEqual(doc)
  return doc
}

async function recallIds(query: string, extra: Record<string, unknown> = {}): Promise<string[]> {
  const doc = okDoc(await call('memory_recall', { query, ...extra }))
  return (doc.hits as { id: string }[]).map((h) => h.id)
}

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does)`)
  tmp = mkdtempSync(path.join(tmpdir(), 'mnemo-mcp-'))
  home = path.join(tmp, 'home')
  project = path.join(tmp, 'webshop')
  otherProject = path.join(tmp, 'elsewhere', 'billing')
  mkdirSync(path.join(project, '.git'), { recursive: true })
  // Another project, seeded through the CLI before the server starts.
  const seeded = mnemo(['remember', 'zebra stripes belong to the billing project', '--project', otherProject, '--json'])
  expect(seeded.code, seeded.stderr).toBe(0)

  transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp'],
    env: { ...process.env, MNEMO_HOME: home } as Record<string, string>,
    cwd: project,
    stderr: 'pipe',
  })
  transport.stderr?.on('data', (chunk: Buffer) => {
    serverStderr += chunk.toString('utf8')
  })
  client = new Client({ name: 'mnemo-test', version: '0.0.0' })
  await client.connect(transport)
})

afterAll(async () => {
  await client?.close()
  if (tmp) rmSync(tmp, { recursive: true, force: true })
})

describe('mnemo mcp over stdio', () => {
  it('identifies itself and lists the nine tools', async () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'mnemo', version: '0.1.0' })
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS)
    const recall = tools.find((t) => t.name === 'memory_recall')!
    expect(recall.inputSchema.required).toEqual(['query'])
    for (const t of tools) expect(t.description?.length ?? 0).toBeGreaterThan(10)
  })

  it('declares plain JSON Schemas (no $schema dialect) and output schemas its results conform to', async () => {
    const { tools } = await client.listTools()
    for (const tool of tools) {
      expect(JSON.stringify(tool.inputSchema)).not.toContain('$schema')
      if (tool.outputSchema) expect(JSON.stringify(tool.outputSchema)).not.toContain('$schema')
    }
    expect(
      tools
        .filter((t) => t.outputSchema)
        .map((t) => t.name)
        .sort(),
    ).toEqual([
      'memory_context',
      'memory_export',
      'memory_forget',
      'memory_recall',
      'memory_remember',
      'memory_sessions',
      'memory_status',
      'memory_timeline',
    ])
  })

  it('memory_remember then memory_recall finds it', async () => {
    const remembered = okDoc(await call('memory_remember', { text: 'checkout uses the stripe zebra adapter', kind: 'decision' }))
    expect(remembered).toEqual({
      created: true,
      id: expect.stringMatching(/^mem_/),
      kind: 'decision',
      text: 'checkout uses the stripe zebra adapter',
    })

    const doc = okDoc(await call('memory_recall', { query: 'stripe adapter' }))
    // The hit view of REST and the CLI (`sessionId`, not `session`; every field, null when absent; issue 17 item 16).
    expect(doc.hits).toEqual([
      {
        id: remembered.id,
        type: 'memory',
        kind: 'decision',
        project: 'webshop',
        projectId: expect.stringMatching(/^prj_/),
        sessionId: null,
        time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        score: expect.any(Number),
        snippet: 'checkout uses the stripe zebra adapter',
        sourceRef: null,
        flags: [],
      },
    ])
    const cliHit = JSON.parse(mnemo(['recall', 'stripe adapter', '--project', 'webshop', '--json']).stdout).hits[0]
    expect(Object.keys(doc.hits[0]).sort()).toEqual(Object.keys(cliHit).sort())

    const again = okDoc(await call('memory_remember', { text: 'checkout uses the stripe zebra adapter', kind: 'decision' }))
    expect(again).toMatchObject({ created: false, id: remembered.id })

    const shown = okDoc(await call('memory_show', { id: remembered.id }))
    expect(shown).toMatchObject({
      type: 'memory',
      memory: { project: 'webshop', id: remembered.id, text: 'checkout uses the stripe zebra adapter', validTo: null },
    })
    // The same view as every surface: no internal fields such as the event sequence number.
    expect(Object.keys(shown.memory as object)).not.toContain('eventSeq')
  })

  it('memory_recall without a project searches only the working directory’s project', async () => {
    // Both projects hold "zebra"; the server runs in webshop.
    const hits = okDoc(await call('memory_recall', { query: 'zebra', limit: 100 })).hits as { project: string; snippet: string }[]
    expect(hits.length).toBeGreaterThan(0)
    expect(hits.map((h) => h.project)).toEqual(hits.map(() => 'webshop'))
    expect(hits.some((h) => h.snippet.includes('billing'))).toBe(false)
    expect(await recallIds('billing')).toEqual([])

    // Named explicitly, the other project is searchable.
    const billing = okDoc(await call('memory_recall', { query: 'zebra', project: 'billing' })).hits as {
      project: string
      snippet: string
    }[]
    expect(billing.map((h) => [h.project, h.snippet])).toEqual([['billing', 'zebra stripes belong to the billing project']])
    expect(okDoc(await call('memory_recall', { query: 'zebra', project: otherProject })).hits).toHaveLength(1)
  })

  it('a domain error is a tool result with isError and a readable message, not a protocol error', async () => {
    const result = await call('memory_show', { id: 'obs_0000000000000000000000' })
    expect(result.isError).toBe(true)
    expect(textOf(result)).toBe('Not found: no observation with id obs_0000000000000000000000')
    expect(result.structuredContent).toBeUndefined()

    const badId = await call('memory_forget', { id: 'not-an-id' })
    expect(badId.isError).toBe(true)
    expect(textOf(badId)).toBe('Invalid arguments: expected an observation (obs_…) or memory (mem_…) id (got "not-an-id")')

    const unknownProject = await call('memory_recall', { query: 'zebra', project: 'nope' })
    expect(unknownProject.isError).toBe(true)
    expect(textOf(unknownProject)).toMatch(/^Not found: no project named or containing "nope" \(hint: known projects: .*billing.*\)$/)

    // The connection is still usable.
    expect((await client.listTools()).tools).toHaveLength(TOOLS.length)
  })

  it('a malformed call (missing query) is rejected before the tool runs', async () => {
    const result = await call('memory_recall', {})
    expect(result.isError).toBe(true)
    expect(textOf(result)).toContain('Input validation error')
    expect(textOf(result)).toContain('query')

    const wrongType = await call('memory_recall', { query: 'zebra', limit: 'ten' })
    expect(wrongType.isError).toBe(true)
    expect(textOf(wrongType)).toContain('limit')

    const badKind = await call('memory_remember', { text: 'x', kind: 'nonsense' })
    expect(badKind.isError).toBe(true)
    expect(textOf(badKind)).toContain('kind')
    expect(await recallIds('nonsense')).toEqual([])
  })

  it('memory_context returns the project’s delimited block', async () => {
    const doc = okDoc(await call('memory_context', {}))
    expect(Object.keys(doc).sort()).toEqual(['project', 'text', 'tokens'])
    expect(doc.project).toBe('webshop')
    expect(doc.text.startsWith('<mnemo-context project="webshop"')).toBe(true)
    expect(doc.text.endsWith('</mnemo-context>')).toBe(true)
    expect(doc.text).toContain('- [decision] checkout uses the stripe zebra adapter')
    expect(doc.text).not.toContain('billing')
    expect(doc.tokens).toBe(estimateTokens(doc.text))
    expect(doc.tokens).toBeLessThanOrEqual(2000)

    const small = okDoc(await call('memory_context', { budget: 200 }))
    expect(small.tokens).toBeLessThanOrEqual(200)
  })

  it('memory_sessions and memory_status describe what is stored', async () => {
    // Only memories were stored in this project: no agent session yet (mnemo's bookkeeping sessions are not listed).
    const sessions = okDoc(await call('memory_sessions', {})).sessions as { id: string; agent: string }[]
    expect(sessions).toEqual([])
    const status = okDoc(await call('memory_status', {}))
    expect(status).toMatchObject({ projects: 2, memories: 2 })
    // Times in ISO-8601 as `mnemo status --json` and REST give them, under the same name (issue 17 item 16).
    expect(status.lastCaptureAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect(status.lastCaptureAt).toBe(JSON.parse(mnemo(['status', '--json']).stdout).lastCaptureAt)
    expect(Object.keys(status)).not.toContain('lastEventAt')
  })

  it('memory_forget reaches another project’s item only when the call names that project; memory_show shows it by id', async () => {
    const seeded = JSON.parse(mnemo(['recall', 'zebra', '--project', 'billing', '--json']).stdout).hits[0] as {
      id: string
      project: string
    }
    expect(seeded.project).toBe('billing')
    const refused = await call('memory_forget', { id: seeded.id })
    expect(refused.isError).toBe(true)
    expect(textOf(refused)).toBe(
      `Not found: no memory ${seeded.id} in this project (hint: it belongs to project "billing": pass project: "billing" to reach it)`,
    )
    // Still there: shown by its id.
    expect(okDoc(await call('memory_show', { id: seeded.id }))).toMatchObject({
      type: 'memory',
      memory: { id: seeded.id, project: 'billing' },
    })
  })

  it('memory_forget removes a memory from recall', async () => {
    const { id } = okDoc(await call('memory_remember', { text: 'temporary walrus workaround for the cart' }))
    expect(await recallIds('walrus')).toEqual([id])
    expect(okDoc(await call('memory_forget', { id }))).toEqual({ forgotten: { id, type: 'memory', events: 1, alsoRecorded: [] } })
    expect(await recallIds('walrus')).toEqual([])
    const shown = await call('memory_show', { id })
    expect(shown.isError).toBe(true)
    expect(textOf(shown)).toBe(`Not found: no memory with id ${id}`)
    // The CLI sees the same store.
    const cli = mnemo(['recall', 'walrus', '--json'])
    expect(cli.code).toBe(0)
    expect(JSON.parse(cli.stdout).hits).toEqual([])
  })

  it('memory_export gives the project as Markdown or its JSONL export; memory_timeline pages a session and refuses a malformed id', async () => {
    const md = okDoc(await call('memory_export', {})) as { project: string; format: string; text: string }
    expect(md).toMatchObject({ project: 'webshop', format: 'markdown' })
    expect(md.text).toMatch(/^# webshop/)
    const jsonl = okDoc(await call('memory_export', { format: 'jsonl' })) as { text: string }
    const manifest = JSON.parse(jsonl.text.split('\n')[0]!) as { format: string; project: string }
    expect(manifest).toMatchObject({ format: 'mnemo-export', project: expect.stringContaining('webshop') })
    const bad = await call('memory_timeline', { session: 'nope' })
    expect(bad.isError).toBe(true)
  })

  it('offers resources (status, recent memories, project profile) and prompts (recall context, hand-off), scoped to the project', async () => {
    await call('memory_remember', { text: 'the checkout flow retries stripe calls twice', kind: 'decision' })
    const { resources } = await client.listResources()
    expect(resources.map((r) => r.uri).sort()).toEqual(['mnemo://memories/recent', 'mnemo://project/profile', 'mnemo://status'])
    const recent = await client.readResource({ uri: 'mnemo://memories/recent' })
    const memories = (JSON.parse((recent.contents[0] as { text: string }).text) as { memories: { text: string; project: string }[] })
      .memories
    expect(memories.map((m) => m.text)).toContain('the checkout flow retries stripe calls twice')
    expect(new Set(memories.map((m) => m.project))).toEqual(new Set(['webshop']))
    const profile = await client.readResource({ uri: 'mnemo://project/profile' })
    expect((profile.contents[0] as { text: string }).text).toMatch(/^<mnemo-context project="webshop"/)
    const { prompts } = await client.listPrompts()
    expect(prompts.map((p) => p.name).sort()).toEqual(['recall_context', 'session_handoff'])
    const prompt = await client.getPrompt({ name: 'recall_context', arguments: { task: 'make stripe checkout more reliable' } })
    const text = (prompt.messages[0]!.content as { text: string }).text
    expect(text).toContain('<mnemo-recall>')
    expect(text).toContain('the checkout flow retries stripe calls twice')
    expect(text).toContain('Task: make stripe checkout more reliable')
  })

  it('writes nothing but protocol messages and no errors on stderr', () => {
    expect(serverStderr).toBe('')
  })
})

describe('mnemo mcp lifecycle', () => {
  it('answers the requests it has read and exits 0 when the client closes stdin', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mnemo-mcp-eof-'))
    try {
      const messages = [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
        },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'memory_status', arguments: {} } },
      ]
      const r = spawnSync(process.execPath, [CLI, 'mcp'], {
        cwd: dir,
        env: { ...process.env, MNEMO_HOME: path.join(dir, 'home') },
        input: messages.map((m) => `${JSON.stringify(m)}\n`).join(''),
        encoding: 'utf8',
        timeout: 10_000,
      })
      expect(r.stderr).toBe('')
      expect(r.status).toBe(0)
      const replies = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: number; result: ParsedJson })
      expect(replies.map((m) => m.id)).toEqual([1, 2])
      expect(replies[0]!.result.serverInfo).toMatchObject({ name: 'mnemo' })
      expect(replies[1]!.result.structuredContent).toMatchObject({ events: 0, memories: 0 })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('answers a line that is not JSON with -32700 and one that is not JSON-RPC with -32600, then goes on', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mnemo-mcp-bad-'))
    try {
      const init = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
      }
      const r = spawnSync(process.execPath, [CLI, 'mcp'], {
        cwd: dir,
        env: { ...process.env, MNEMO_HOME: path.join(dir, 'home') },
        input: `{not json\n{"hello":1}\n${JSON.stringify(init)}\n`,
        encoding: 'utf8',
        timeout: 10_000,
      })
      expect([r.status, r.stderr]).toEqual([0, ''])
      const replies = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: number | null; error?: { code: number; message: string }; result?: unknown })
      expect(replies.map((m) => [m.id, m.error?.code])).toEqual([
        [null, -32700],
        [null, -32600],
        [1, undefined],
      ])
      expect(replies[0]!.error!.message).toMatch(/^Parse error: /)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
