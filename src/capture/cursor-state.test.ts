import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCliCaptured } from '../testing/run-cli.js'
import type { EventInput } from '../core/types.js'
import { listImportFiles, parseImportFile } from '../engine/import-files.js'
import type { MnemoEngine } from '../engine/mnemo.js'
import { createTestEngine, tempDir } from '../testing/test-mnemo.js'
import { parseCursorDatabase } from './cursor-db.js'
import { deriveCursorState, parseCursorState, type CursorStateSource } from './cursor-state.js'

// Cursor's chats live in SQLite state.vscdb files. The fixture is SQL (fixtures/transcripts/cursor/*.sql),
// loaded here into a Cursor-like folder: User/globalStorage/state.vscdb and one workspace database
// with the workspace.json that names its folder.
const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
const SQL = path.join(repoRoot, 'fixtures/transcripts/cursor')
const A = '2f6c1a9e-7b4d-4c3a-9e1f-5a8b7c6d5e4f' // agent chat, listed by the workspace database
const B = '8d1e4b2a-3c5f-4e6d-8a7b-9c0d1e2f3a4b' // its bubbles name their workspace folder
const C = 'c4a7e2d1-0b9f-4d8e-a6c5-b4a3f2e1d0c9' // older inline conversation, no folder anywhere
const TAB = '5b7e9c1d-2f4a-4b6c-8d0e-1f3a5b7c9d2e'
const APP = '/nonexistent/mnemo-fixture/cursor-app'

let tmp: ReturnType<typeof tempDir>
let user: string
let globalDb: string
let workspaceDb: string

function loadSql(file: string, sql: string): void {
  mkdirSync(path.dirname(file), { recursive: true })
  const db = new Database(file)
  db.exec(readFileSync(path.join(SQL, sql), 'utf8'))
  db.close()
}

beforeAll(() => {
  tmp = tempDir('mnemo-cursor-')
  user = path.join(tmp.dir, 'User')
  globalDb = path.join(user, 'globalStorage/state.vscdb')
  workspaceDb = path.join(user, 'workspaceStorage/0d3f5a7c9e/state.vscdb')
  loadSql(globalDb, 'global-state.vscdb.sql')
  loadSql(workspaceDb, 'workspace-state.vscdb.sql')
  writeFileSync(path.join(path.dirname(workspaceDb), 'workspace.json'), JSON.stringify({ folder: `file://${APP}` }))
})
afterAll(() => tmp.cleanup())

const parseGlobal = () => parseCursorDatabase(globalDb, { file: globalDb }).parse
function observe(events: EventInput[]): (string | undefined)[][] {
  return events.flatMap((e) => deriveCursorState(e).observations.map((o) => [o.kind, o.role, o.tool, o.sourceRef, o.text]))
}
async function snapshot(engine: MnemoEngine): Promise<unknown> {
  const ids = (await engine.listProjects()).map((p) => p.id)
  return {
    projects: await engine.listProjects(),
    sessions: await engine.sessions({ limit: 100 }),
    observations: await engine.browseObservations({ projectIds: ids, order: 'asc', limit: 500 }),
  }
}
const sha = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex')

const cli = (argv: string[], home: string) => runCliCaptured(argv, { env: { MNEMO_HOME: home, HOME: home }, cwd: tmp.dir })

describe('parseCursorDatabase on a global state.vscdb', () => {
  it('reads composers and their bubbles; skips bad, missing and unfinished ones with their key; counts unknown bubble types', () => {
    const r = parseGlobal()
    expect(r.read).toBe(21) // 5 composerData rows, 11 + 3 listed bubbles, 2 inline ones
    expect(r.skipped).toEqual([
      { line: 'composerData:f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b', reason: expect.stringMatching(/^invalid JSON: /) },
      { line: `bubbleId:${A}:a0000001-0000-4000-8000-00000000000b`, reason: 'listed in the conversation but not stored' },
      { line: `bubbleId:${A}:a0000001-0000-4000-8000-00000000000a`, reason: 'tool call still loading: import again once it has finished' },
    ])
    expect(r.unknownTypes).toEqual({ 'bubble type 30': 1 })
    // The empty composer adds nothing; mnemo's own tool call is dropped.
    expect(r.events.map((e) => e.type)).toEqual([
      'composer',
      'bubble',
      'bubble',
      'composer',
      ...Array(7).fill('bubble'),
      'composer',
      'bubble',
      'bubble',
      'bubble',
    ])
    expect(r.events.map((e) => e.sessionKey)).toEqual([...Array(3).fill(C), ...Array(8).fill(A), ...Array(4).fill(B)])
    expect(JSON.stringify(r.events)).not.toContain('mcp_mnemo_memory_recall')
    expect(r.events.every((e) => e.agent === 'cursor' && e.format === 'cursor-state')).toBe(true)
  })

  it('keys events by composer and bubble id and times them by the bubbles', () => {
    const r = parseGlobal()
    const a = r.events.filter((e) => e.sessionKey === A)
    expect(a.slice(0, 2).map((e) => e.idemKey)).toEqual([`cursor:${A}:composer`, `cursor:${A}:a0000001-0000-4000-8000-000000000001`])
    expect(new Set(r.events.map((e) => e.idemKey)).size).toBe(r.events.length)
    const t = Date.parse('2026-04-11T09:00:00Z')
    expect(a.map((e) => e.ts)).toEqual([t, t + 5_000, t + 9_000, t + 15_000, t + 16_000, t + 30_000, t + 40_000, t + 55_000])
    expect(a.every((e) => e.sessionStartedAt === t)).toBe(true)
  })

  it('files composers under the workspace that lists them, the folder their bubbles name, else cursor:<id prefix>', () => {
    const projects = new Map(parseGlobal().events.map((e) => [e.sessionKey, e.project]))
    expect(projects.get(A)).toEqual({ root: APP, name: 'cursor-app' })
    expect(projects.get(B)).toEqual({ root: '/nonexistent/mnemo-fixture/cursor-api', name: 'cursor-api' })
    expect(projects.get(C)).toEqual({ root: 'cursor:c4a7e2d1', name: 'c4a7e2d1' })
    const given = parseCursorDatabase(globalDb, { file: globalDb, project: { root: '/p/x', name: 'x' } }).parse
    expect(new Set(given.events.map((e) => e.project.root))).toEqual(new Set(['/p/x']))
  })

  it('redacts a secret in a tool input, keeps an oversized output capped with its tail, decodes blob rows', () => {
    const r = parseGlobal()
    const text = JSON.stringify(r.events)
    expect(text).not.toContain('f1xture-T0ken')
    expect(text).toContain('export API_TOKEN=[REDACTED:token] && npm test -- orders')
    const run = r.events.find((e) => e.idemKey.endsWith('a0000001-0000-4000-8000-000000000006'))!
    const output = (run.payload as { toolFormerData: { result: { output: string } } }).toolFormerData.result.output
    expect(output.length).toBeLessThan(17_000)
    expect(output).toMatch(/…\[mnemo: \d+ chars cut, \d+ total\]…/)
    expect(output).toContain('Tests: 400 passed, 400 total')
    // Bubble a1 and composer B are stored as BLOBs in the fixture.
    expect(r.events.find((e) => e.idemKey === `cursor:${A}:a0000001-0000-4000-8000-000000000002`)).toBeDefined()
    expect(r.events.find((e) => e.idemKey === `cursor:${B}:composer`)).toBeDefined()
  })
})

describe('deriveCursorState', () => {
  it('derives prompts (rich text too), reasoning, tool calls with results and errors, messages; nothing from an empty bubble', () => {
    const r = parseGlobal()
    const obs = observe(r.events)
    expect(obs.map((o) => o.slice(0, 4))).toEqual([
      ['prompt', 'user', undefined, undefined],
      ['message', 'assistant', undefined, undefined],
      ['prompt', 'user', undefined, undefined],
      ['reasoning', 'assistant', undefined, undefined],
      ['tool', 'assistant', 'read_file', 'toolu_cr01'],
      ['tool_result', 'tool', 'read_file', 'toolu_cr01'],
      ['tool', 'assistant', 'run_terminal_cmd', 'toolu_cr02'],
      ['error', 'tool', 'run_terminal_cmd', 'toolu_cr02'],
      ['tool', 'assistant', 'search_replace', 'toolu_cr03'],
      ['tool', 'assistant', 'run_terminal_cmd', 'toolu_cr04'],
      ['tool_result', 'tool', 'run_terminal_cmd', 'toolu_cr04'],
      ['message', 'assistant', undefined, undefined],
      ['prompt', 'user', undefined, undefined],
      ['tool', 'assistant', 'edit_file', 'toolu_cr11'],
      ['tool_result', 'tool', 'edit_file', 'toolu_cr11'],
      ['message', 'assistant', undefined, undefined],
    ])
    expect(obs[7]![4]).toContain('Exceeded timeout of 5000 ms')
    expect(obs[12]![4]).toBe('Add an index on orders.created_at; the monthly report scans the whole table.')
    const empty = r.events.find((e) => e.idemKey.endsWith('a0000001-0000-4000-8000-000000000004'))!
    expect(deriveCursorState(empty)).toEqual({ observations: [] })
    const files = r.events.flatMap((e) => deriveCursorState(e).observations.flatMap((o) => o.files ?? []))
    expect(files).toEqual(expect.arrayContaining(['test/orders.test.ts', 'test/helpers/db.ts', 'db/migrations/0042_orders_created_at.sql']))
    expect(r.events.filter((e) => e.type === 'composer').map((e) => deriveCursorState(e).session?.title)).toEqual([
      undefined,
      'Fix flaky orders test',
      'Index orders.created_at',
    ])
  })

  it('never throws on odd shapes; a rejected or cancelled call is an error', () => {
    const base = parseGlobal().events[0]!
    for (const payload of [
      null,
      3,
      { type: 2, toolFormerData: 'x' },
      { type: 2, toolFormerData: { name: 5, rawArgs: '{bad' } },
      { type: 1, richText: '{"root":' },
      { type: 'ai', thinking: [] },
    ]) {
      expect(() => deriveCursorState({ ...base, type: 'bubble', payload })).not.toThrow()
    }
    const call = (extra: object) =>
      deriveCursorState({
        ...base,
        type: 'bubble',
        payload: { type: 2, toolFormerData: { name: 'run_terminal_cmd', rawArgs: '{"command":"rm -rf build"}', ...extra } },
      }).observations.map((o) => [o.kind, o.text])
    expect(call({ status: 'completed', userDecision: 'rejected' })).toEqual([
      ['tool', 'run_terminal_cmd: rm -rf build'],
      ['error', '(rejected by the user)'],
    ])
    expect(call({ status: 'cancelled' })).toEqual([
      ['tool', 'run_terminal_cmd: rm -rf build'],
      ['error', '(cancelled)'],
    ])
  })

  it('reads an inline conversation (a repeated bubble id kept apart) and the older chat panel from a source without a database', () => {
    const source: CursorStateSource = {
      composers: () => [
        {
          key: 'composerData:k1',
          value: JSON.stringify({
            composerId: 'k1',
            createdAt: 1_000,
            conversation: [{ type: 1, bubbleId: 'x', text: 'hi' }, null, { type: 2, bubbleId: 'x', text: 'hello' }],
          }),
        },
      ],
      bubbles: () => new Map(),
      item: (key) =>
        key === 'workbench.panel.aichat.view.aichat.chatdata'
          ? JSON.stringify({ tabs: [{ tabId: 't', bubbles: [{ type: 'user', text: 'q' }] }, { chatTitle: 'no id' }] })
          : undefined,
    }
    const r = parseCursorState(source, { file: 'x.vscdb', fallbackTime: 5_000 })
    expect(r.skipped).toEqual([
      { line: 'composerData:k1 conversation[1]', reason: 'bubble is not an object' },
      { line: 'workbench.panel.aichat.view.aichat.chatdata tabs[1]', reason: 'tab without tabId' },
    ])
    expect(r.events.map((e) => e.idemKey).slice(0, 3)).toEqual(['cursor:k1:composer', 'cursor:k1:x', 'cursor:k1:x#2'])
    expect(r.events.map((e) => [e.sessionKey, e.type, e.ts])).toEqual([
      ['k1', 'composer', 1_000],
      ['k1', 'bubble', 1_000],
      ['k1', 'bubble', 1_000],
      ['t', 'tab', 5_000],
      ['t', 'bubble', 5_000],
    ])
  })
})

describe('a workspace state.vscdb', () => {
  it('imports the older chat panel under the folder workspace.json names', () => {
    const r = parseCursorDatabase(workspaceDb, { file: workspaceDb }).parse
    expect(r.unknownTypes).toEqual({ 'bubble type system': 1 })
    expect(r.events.map((e) => [e.type, e.idemKey])).toEqual([
      ['tab', `cursor:${TAB}:tab`],
      ['bubble', `cursor:${TAB}:t1`],
      ['bubble', `cursor:${TAB}:t2`],
    ])
    expect(r.events[0]!.project).toEqual({ root: APP, name: 'cursor-app' })
    expect(observe(r.events).map((o) => [o[0], o[4]])).toEqual([
      ['prompt', 'What does retryWithBackoff do when the promise keeps failing?'],
      ['message', 'It retries up to 5 times, doubling the delay from 200 ms, then rethrows the last error.'],
    ])
  })

  it('says where the chats are when a workspace database only lists its composers', () => {
    const t = tempDir()
    try {
      const db = path.join(t.dir, 'workspaceStorage/abc/state.vscdb')
      loadSql(db, 'workspace-state.vscdb.sql')
      const w = new Database(db)
      w.prepare('DELETE FROM ItemTable WHERE key = ?').run('workbench.panel.aichat.view.aichat.chatdata')
      w.close()
      expect(parseCursorDatabase(db, { file: db }).error).toBe(
        `no conversations stored here: this workspace's 1 Composer chat(s) are kept in Cursor's global database (${path.join(t.dir, 'globalStorage/state.vscdb')}); import that file`,
      )
    } finally {
      t.cleanup()
    }
  })
})

describe('importing Cursor databases', () => {
  it('detects state.vscdb, stores, finds, adds nothing on re-import, rebuilds the same rows, and never writes to the database', async () => {
    const before = { global: sha(globalDb), workspace: sha(workspaceDb), files: readdirSync(path.dirname(globalDb)) }
    const { engine } = createTestEngine()
    expect(listImportFiles(user)).toEqual([globalDb, workspaceDb])
    const first = await engine.importPath(user)
    expect(first).toMatchObject({ read: 25, imported: 18, duplicates: 0, skipped: 3, unknown: 2 })
    expect(first.files.map((f) => f.format)).toEqual(['cursor', 'cursor'])
    const hit = (await engine.recall('Exceeded timeout orders', { limit: 3 })).find((h) => h.kind === 'error')
    expect(hit).toMatchObject({ project: 'cursor-app', sourceRef: 'toolu_cr02' })
    expect((await engine.recall('retryWithBackoff', { limit: 1 }))[0]).toMatchObject({ project: 'cursor-app' })
    expect(await engine.importPath(globalDb, { format: 'cursor' })).toMatchObject({ imported: 0, duplicates: 15 })
    const snap = await snapshot(engine)
    expect((await engine.rebuild()).events).toBe(18)
    expect(await snapshot(engine)).toEqual(snap)
    expect({ global: sha(globalDb), workspace: sha(workspaceDb), files: readdirSync(path.dirname(globalDb)) }).toEqual(before)
  })

  it('names the file and stores nothing for a file that is not SQLite, an empty database, a database without chats', async () => {
    const t = tempDir()
    try {
      const { engine } = createTestEngine()
      const cases: [string, (f: string) => void, string][] = [
        [
          'notes/state.vscdb',
          (f) => writeFileSync(f, 'this is not a database, just text that happens to be long enough'),
          'not a SQLite database (Cursor keeps its chats in SQLite state.vscdb files)',
        ],
        ['empty/state.vscdb', (f) => writeFileSync(f, ''), 'no Cursor chat tables (cursorDiskKV, ItemTable): not a Cursor state.vscdb'],
        [
          'bare/state.vscdb',
          (f) => new Database(f).exec('CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)').close(),
          'no conversations with messages (no composerData rows with bubbles, no workbench.panel.aichat.view.aichat.chatdata)',
        ],
      ]
      for (const [name, make, why] of cases) {
        const file = path.join(t.dir, name)
        mkdirSync(path.dirname(file), { recursive: true })
        make(file)
        await expect(engine.importPath(file)).rejects.toMatchObject({
          code: 'IMPORT_FAILED',
          message: `no records imported from ${file}: 0 read, 0 skipped (${why})`,
        })
      }
      expect((await engine.stats()).events).toBe(0)
      // An OpenCode database given as Cursor's is named as such.
      const oc = path.join(t.dir, 'oc.vscdb')
      new Database(oc).exec('CREATE TABLE session (id TEXT); CREATE TABLE message (id TEXT); CREATE TABLE part (id TEXT)').close()
      expect(parseImportFile(oc, 'cursor', {}).error).toMatch(/^an OpenCode database, not a Cursor one/)
    } finally {
      t.cleanup()
    }
  })

  it('says the database is locked when Cursor holds it, and reads it once free', () => {
    const t = tempDir()
    try {
      const file = path.join(t.dir, 'state.vscdb')
      loadSql(file, 'workspace-state.vscdb.sql')
      const writer = new Database(file)
      writer.exec('BEGIN EXCLUSIVE')
      const locked = parseCursorDatabase(file, { file, busyTimeoutMs: 50 })
      expect(locked.error).toBe(
        'the database is locked by another process (Cursor is writing to it): try again, close Cursor, or import a copy of the file',
      )
      expect(locked.parse.events).toEqual([])
      writer.exec('ROLLBACK')
      writer.close()
      expect(parseCursorDatabase(file, { file }).parse.events.length).toBe(3)
    } finally {
      t.cleanup()
    }
  })
})

describe('mnemo import of Cursor databases (CLI)', () => {
  it('imports a state.vscdb and, with --format cursor, the folder; a text file given as Cursor exits 1 naming it', async () => {
    const t = tempDir()
    try {
      const home = path.join(t.dir, 'home')
      const first = await cli(['import', globalDb], home)
      expect(first.code).toBe(0)
      expect(first.stdout).toContain(`${globalDb}  [cursor]  read 21 · imported 15 · already present 0`)
      expect(first.stdout).toContain('unknown types: bubble type 30×1')
      const folder = await cli(['import', user, '--format', 'cursor', '--json'], home)
      expect(JSON.parse(folder.stdout)).toMatchObject({ imported: 3, duplicates: 15 })
      const recall = JSON.parse((await cli(['recall', 'orders_created_at index', '--all-projects', '--json'], home)).stdout)
      expect(recall.hits[0]).toMatchObject({ project: 'cursor-api' })
      const text = path.join(t.dir, 'notes.txt')
      writeFileSync(text, 'hello')
      const failed = await cli(['import', text, '--format', 'cursor'], home)
      expect(failed.code).toBe(1)
      expect(failed.stderr).toContain(`no records imported from ${text}`)
      expect(failed.stderr).toContain('not a SQLite database')
      expect(existsSync(path.join(t.dir, 'notes.txt-journal'))).toBe(false)
    } finally {
      t.cleanup()
    }
  })
})
