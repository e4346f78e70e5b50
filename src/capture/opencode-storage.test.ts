import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { runCliCaptured } from '../testing/run-cli.js'
import type { EventInput } from '../core/types.js'
import { parseImportFile } from '../engine/import-files.js'
import type { MnemoEngine } from '../engine/mnemo.js'
import { createTestEngine, tempDir } from '../testing/test-mnemo.js'
import { deriveOpenCodeStorage, isOpenCodeStorage, parseOpenCodeStorage } from './opencode-storage.js'

// A hand-built OpenCode storage folder (the JSON layout OpenCode kept before 1.2), in the shapes
// of OpenCode's message-v2.ts: one git project, one session outside git (project "global").
const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
const STORAGE = path.join(repoRoot, 'fixtures/transcripts/opencode/storage')
const APP = '/nonexistent/mnemo-fixture/opencode-app'
const SA = 'ses_5d2e8f1a0ffeQx7RkT2mVb9LcW'
const SB = 'ses_5d3a01b7cffeHj2Kl4Mn6Pq8Rs'
const SESSION_A_FILE = path.join(STORAGE, 'session/4f1c9e2ab7d35c08e6f1a92b3c4d5e6f7a8b9c0d', `${SA}.json`)
const T0 = Date.parse('2026-04-09T14:00:00Z')

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const parse = () => parseOpenCodeStorage({ file: STORAGE })
function observe(events: EventInput[]): (string | undefined)[][] {
  return events.flatMap((e) => deriveOpenCodeStorage(e).observations.map((o) => [o.kind, o.role, o.tool, o.sourceRef, o.text]))
}

/** Every row a query can see, comparable across a rebuild. */
async function snapshot(engine: MnemoEngine): Promise<unknown> {
  const ids = (await engine.listProjects()).map((p) => p.id)
  return {
    projects: await engine.listProjects(),
    sessions: await engine.sessions({ limit: 100 }),
    observations: await engine.browseObservations({ projectIds: ids, order: 'asc', limit: 500 }),
  }
}

const cli = (argv: string[], home: string) => runCliCaptured(argv, { env: { MNEMO_HOME: home, HOME: home }, cwd: repoRoot })

describe('parseOpenCodeStorage', () => {
  it('reads session, message and part files; skips running tools, counts unknown part types, drops mnemo calls', () => {
    const r = parse()
    expect(isOpenCodeStorage(STORAGE)).toBe(true)
    expect(r.read).toBe(31) // 2 sessions, 8 messages, 21 parts
    expect(r.events).toHaveLength(28)
    expect(r.skipped).toEqual([
      {
        line: 'part/msg_a1b2c3d40006Er2Ty4Ui6Op8As/prt_a1b2c3d40603Yz3Ab4Cd5Ef6Gh.json',
        reason: 'tool call still running: import again once it has finished',
      },
    ])
    expect(r.unknownTypes).toEqual({ 'widget-preview': 1 })
    expect(JSON.stringify(r.events)).not.toContain('mnemo_memory_recall')
    expect(r.events.every((e) => e.agent === 'opencode' && e.format === 'opencode-storage')).toBe(true)
  })

  it('orders sessions by creation, keys records by their ids, and times them', () => {
    const r = parse()
    const a = r.events.filter((e) => e.sessionKey === SA)
    expect(a.slice(0, 3).map((e) => e.idemKey)).toEqual([
      `opencode:${SA}:session`,
      `opencode:${SA}:msg_a1b2c3d40001Lq8Wx2Ye4Rt6Uo`,
      `opencode:${SA}:msg_a1b2c3d40001Lq8Wx2Ye4Rt6Uo:prt_a1b2c3d40101Aa1Bb2Cc3Dd4Ee`,
    ])
    expect(new Set(r.events.map((e) => e.idemKey)).size).toBe(r.events.length)
    expect(r.events.map((e) => e.sessionKey)).toEqual([...a.map(() => SA), ...r.events.filter((e) => e.sessionKey === SB).map(() => SB)])
    expect(a[0]!.ts).toBe(T0)
    expect(a.every((e) => e.sessionStartedAt === T0)).toBe(true)
    // A part with its own start time keeps it; one without takes its message's.
    const read = a.find((e) => e.idemKey.endsWith('prt_a1b2c3d40203Zz1Ab2Cd3Ef4Gh'))!
    expect(read.ts).toBe(T0 + 13_000)
    expect(a.find((e) => e.idemKey.endsWith('prt_a1b2c3d40201Pp3Qq4Rr5Ss6Tt'))!.ts).toBe(T0 + 8_000)
  })

  it('files a session under its worktree, a session outside git under its folder, and takes --project over both', () => {
    const r = parse()
    expect(r.events.find((e) => e.sessionKey === SA)!.project).toEqual({ root: APP, name: 'opencode-app' })
    expect(r.events.find((e) => e.sessionKey === SB)!.project).toEqual({ root: '/nonexistent/mnemo-fixture/scratch', name: 'scratch' })
    const given = parseOpenCodeStorage({ file: STORAGE, project: { root: '/p/x', name: 'x' } })
    expect(new Set(given.events.map((e) => e.project.root))).toEqual(new Set(['/p/x']))
    const t = tempDir()
    try {
      // No directory, no worktree, no message path: the corpus opencode:<projectID>.
      mkdirSync(path.join(t.dir, 'session/p1'), { recursive: true })
      mkdirSync(path.join(t.dir, 'message'))
      mkdirSync(path.join(t.dir, 'part'))
      writeFileSync(path.join(t.dir, 'session/p1/ses_x.json'), JSON.stringify({ id: 'ses_x', title: 'x', time: { created: T0 } }))
      expect(parseOpenCodeStorage({ file: t.dir }).events[0]!.project).toEqual({ root: 'opencode:p1', name: 'p1' })
    } finally {
      t.cleanup()
    }
  })

  it('redacts secrets in tool input and caps an oversized output before storing', () => {
    const r = parse()
    const text = JSON.stringify(r.events)
    expect(text).not.toContain('Tr0ub4dor')
    expect(text).toContain('postgres://app:[REDACTED:url-password]@db.internal:5432/orders')
    const bash = r.events.find((e) => e.idemKey.endsWith('prt_a1b2c3d40302Qr9St0Uv1Wx2Yz'))!
    const output = (bash.payload as { state: { output: string } }).state.output
    expect(output.length).toBeLessThan(17_000)
    expect(output).toMatch(/…\[mnemo: \d+ chars cut, \d+ total\]…/)
    expect(output).toContain('Tests: 421 passed, 421 total') // the tail is kept
  })
})

describe('deriveOpenCodeStorage', () => {
  it('derives prompts, reasoning, tool calls with results and errors, messages and a failed message; nothing from synthetic text, steps, files or patches', () => {
    const obs = observe(parse().events)
    expect(obs.map((o) => o.slice(0, 4))).toEqual([
      ['prompt', 'user', undefined, undefined],
      ['reasoning', 'assistant', undefined, undefined],
      ['tool', 'assistant', 'read', 'toolu_01Read7f3a'],
      ['tool_result', 'tool', 'read', 'toolu_01Read7f3a'],
      ['tool', 'assistant', 'bash', 'toolu_02Bash9c1d'],
      ['error', 'tool', 'bash', 'toolu_02Bash9c1d'],
      ['tool', 'assistant', 'edit', 'toolu_03Edit4e8b'],
      ['tool', 'assistant', 'bash', 'toolu_04Bash2a6c'],
      ['tool_result', 'tool', 'bash', 'toolu_04Bash2a6c'],
      ['message', 'assistant', undefined, undefined],
      ['error', 'assistant', undefined, undefined],
      ['prompt', 'user', undefined, undefined],
      ['prompt', 'user', undefined, undefined],
      ['message', 'assistant', undefined, undefined],
    ])
    expect(obs[5]![4]).toMatch(/^Error: connect ECONNREFUSED 10\.0\.0\.7:5432/)
    expect(obs[6]![4]).toContain('loginRateLimit({ max: 5, windowMs: 60_000 })')
    expect(obs[10]![4]).toBe('APIError: Overloaded')
    expect(obs[8]![4]!.length).toBeLessThan(8_100) // OBSERVATION_CHARS and the cut marker
    expect(obs[8]![4]).toMatch(/Tests: 421 passed, 421 total/)
  })

  it('takes file paths from OpenCode tool inputs (filePath) and names the session by its title, not the placeholder', () => {
    const events = parse().events
    const files = events.flatMap((e) => deriveOpenCodeStorage(e).observations.flatMap((o) => o.files ?? []))
    expect(files).toContain(`${APP}/src/routes/login.ts`)
    const titles = events.filter((e) => e.type === 'session').map((e) => deriveOpenCodeStorage(e).session?.title)
    expect(titles).toEqual(['Rate-limit the login route', undefined])
  })

  it('never throws on odd shapes, and ignores an aborted message', () => {
    const base = parse().events[0]!
    for (const [type, payload] of [
      ['part', null],
      ['part', { type: 'tool', state: 'x' }],
      ['part', { type: 'tool', tool: 'bash', state: { status: 'completed', input: 'ls', output: 7 } }],
      ['part', { type: 'retry', error: 'x' }],
      ['message', { error: 'boom' }],
      ['session', { title: 5 }],
    ] as const) {
      expect(() => deriveOpenCodeStorage({ ...base, type, payload })).not.toThrow()
    }
    expect(
      deriveOpenCodeStorage({
        ...base,
        type: 'message',
        payload: { role: 'assistant', error: { name: 'MessageAbortedError', data: { message: 'aborted' } } },
      }).observations,
    ).toEqual([])
  })
})

describe('importing OpenCode storage', () => {
  it('is detected by auto, stored, searchable, adds nothing on re-import, and rebuilds to the same rows', async () => {
    const { engine } = createTestEngine()
    const first = await engine.importPath(STORAGE)
    expect(first).toMatchObject({ read: 31, imported: 28, duplicates: 0, skipped: 1, unknown: 1 })
    expect(first.files[0]).toMatchObject({ file: STORAGE, format: 'opencode' })
    const hits = await engine.recall('ECONNREFUSED migrate', { limit: 3 })
    expect(hits[0]).toMatchObject({ kind: 'error', project: 'opencode-app', sourceRef: 'toolu_02Bash9c1d' })
    expect((await engine.recall('rebase onto newbase', { limit: 1 }))[0]).toMatchObject({ kind: 'message', project: 'scratch' })
    expect(await engine.importPath(STORAGE, { format: 'opencode' })).toMatchObject({ imported: 0, duplicates: 28 })
    expect((await engine.sessions()).filter((s) => s.agent === 'opencode').map((s) => s.title)).toEqual([
      'What does git rebase --onto do?',
      'Rate-limit the login route',
    ])
    const before = await snapshot(engine)
    expect((await engine.rebuild()).events).toBe(28)
    expect(await snapshot(engine)).toEqual(before)
  })

  it('imports one session from its session file, and finds the storage inside a parent folder', async () => {
    const one = parseImportFile(SESSION_A_FILE, 'auto', {})
    expect(one.format).toBe('opencode')
    expect(new Set(one.parse.events.map((e) => e.sessionKey))).toEqual(new Set([SA]))
    const { engine } = createTestEngine()
    const r = await engine.importPath(path.dirname(STORAGE))
    expect(r.files.map((f) => [f.file, f.format])).toEqual([[STORAGE, 'opencode']])
  })

  it('adds a tool call once it has finished, and nothing else', async () => {
    const t = tempDir()
    try {
      cpSync(STORAGE, t.dir, { recursive: true })
      const { engine } = createTestEngine()
      await engine.importPath(t.dir)
      const file = path.join(t.dir, 'part/msg_a1b2c3d40006Er2Ty4Ui6Op8As/prt_a1b2c3d40603Yz3Ab4Cd5Ef6Gh.json')
      const part = JSON.parse(readFileSync(file, 'utf8'))
      part.state = {
        ...part.state,
        status: 'completed',
        output: 'Wrote file successfully.',
        time: { start: part.state.time.start, end: part.state.time.start + 50 },
      }
      writeFileSync(file, JSON.stringify(part))
      const again = await engine.importPath(t.dir)
      expect(again).toMatchObject({ imported: 1, duplicates: 28, skipped: 0 })
      expect((await engine.recall('LOGIN_LIMIT', { limit: 1 }))[0]).toMatchObject({ kind: 'tool', sourceRef: 'toolu_06Write8d2f' })
    } finally {
      t.cleanup()
    }
  })

  it('reports the messages of a missing session file, and the parts of an unreadable message, instead of dropping them quietly', async () => {
    const t = tempDir()
    try {
      cpSync(STORAGE, t.dir, { recursive: true })
      rmSync(path.join(t.dir, 'session/global/ses_5d3a01b7cffeHj2Kl4Mn6Pq8Rs.json'))
      writeFileSync(path.join(t.dir, 'message', SA, readdirSync(path.join(t.dir, 'message', SA))[0]!), '{"id": "msg_trunc')
      const r = await createTestEngine().engine.importPath(t.dir)
      const skipped = r.files[0]!.skipped.map((s) => `${s.line}: ${s.reason}`)
      expect(
        skipped.filter((x) => x.includes('no readable session file for ses_5d3a01b7cffeHj2Kl4Mn6Pq8Rs')).length,
      ).toBeGreaterThanOrEqual(2)
      expect(
        skipped.some((x) => x.startsWith('message/ses_5d3a01b7cffeHj2Kl4Mn6Pq8Rs/msg_a1c0ffee0001Tu5Vw7Xy9Za1Bc.json: message skipped')),
      ).toBe(true)
      expect(skipped.some((x) => /^part\/.+: part skipped: its message message\/.+ could not be read$/.test(x))).toBe(true)
    } finally {
      t.cleanup()
    }
  })

  it('fails naming the file when the only session file is corrupt, and stores nothing', async () => {
    const t = tempDir()
    try {
      cpSync(STORAGE, t.dir, { recursive: true })
      const copy = path.join(t.dir, 'session/4f1c9e2ab7d35c08e6f1a92b3c4d5e6f7a8b9c0d', `${SA}.json`)
      writeFileSync(copy, readFileSync(copy, 'utf8').slice(0, 60))
      const { engine } = createTestEngine()
      await expect(engine.importPath(copy)).rejects.toMatchObject({
        code: 'IMPORT_FAILED',
        message: expect.stringMatching(
          new RegExp(
            `^${escapeRegExp(`no records imported from ${copy}: 1 read, 1 skipped (no valid records; first skipped: ${copy}: invalid JSON: `)}`,
          ),
        ),
      })
      expect((await engine.stats()).events).toBe(0)
      // In the whole folder the other session still imports; the bad file is named.
      const all = await engine.importPath(t.dir)
      expect(all.files[0]!.skipped[0]).toMatchObject({
        line: `session/4f1c9e2ab7d35c08e6f1a92b3c4d5e6f7a8b9c0d/${SA}.json`,
        reason: expect.stringMatching(/^invalid JSON/),
      })
      expect(all.imported).toBe(5) // the session outside git: its session, 2 messages, 2 parts
    } finally {
      t.cleanup()
    }
  })

  it('names what it got instead: a message file, a SQLite-only OpenCode folder, a folder that is not storage', () => {
    const msg = path.join(STORAGE, `message/${SA}/msg_a1b2c3d40001Lq8Wx2Ye4Rt6Uo.json`)
    expect(parseImportFile(msg, 'auto', {}).error).toBe(
      `an OpenCode message file: import the storage folder (${STORAGE}) or a session file (session/<project>/<session>.json)`,
    )
    const t = tempDir()
    try {
      // OpenCode 1.2+: the data folder holds opencode.db and a storage folder without sessions.
      writeFileSync(path.join(t.dir, 'opencode.db'), 'SQLite format 3\0')
      mkdirSync(path.join(t.dir, 'storage'))
      const db = path.join(t.dir, 'opencode.db')
      const sqliteOnly = `OpenCode 1.2 and later keep sessions in a SQLite database (${db}), which mnemo does not read: only OpenCode's JSON storage layout (storage/ with session/, message/ and part/) is imported`
      expect(parseImportFile(path.join(t.dir, 'storage'), 'opencode', {}).error).toBe(sqliteOnly)
      expect(parseImportFile(db, 'auto', {}).error).toBe(sqliteOnly)
      expect(parseImportFile(`${repoRoot}fixtures/transcripts/gemini`, 'opencode', {}).error).toBe(
        'not an OpenCode storage folder (it needs session/, message/ and part/ folders)',
      )
      rmSync(path.join(t.dir, 'opencode.db'))
      for (const d of ['session', 'message', 'part']) mkdirSync(path.join(t.dir, 'storage', d))
      expect(parseImportFile(path.join(t.dir, 'storage'), 'auto', {}).error).toBe(
        `no sessions under ${path.join(t.dir, 'storage', 'session')}`,
      )
    } finally {
      t.cleanup()
    }
  })
})

describe('mnemo import of OpenCode storage (CLI)', () => {
  it('imports the folder, then --format opencode adds nothing; a SQLite-only data folder exits 1 naming the database', async () => {
    const t = tempDir()
    try {
      const home = path.join(t.dir, 'home')
      const first = await cli(['import', 'fixtures/transcripts/opencode/storage', '--json'], home)
      expect(first.code).toBe(0)
      expect(JSON.parse(first.stdout)).toMatchObject({ imported: 28, files: [{ format: 'opencode' }] })
      const again = await cli(['import', STORAGE, '--format', 'opencode'], home)
      expect(again.stdout).toContain('imported 0 · already present 28')
      expect(again.stdout).toContain('unknown types: widget-preview×1')
      const recall = await cli(['recall', 'loginRateLimit', '--all-projects', '--json'], home)
      expect(JSON.parse(recall.stdout).hits.length).toBeGreaterThan(0)
      const data = path.join(t.dir, 'opencode')
      mkdirSync(data)
      writeFileSync(path.join(data, 'opencode.db'), '')
      const failed = await cli(['import', data], home)
      expect(failed.code).toBe(1)
      expect(failed.stderr).toContain(
        `OpenCode 1.2 and later keep sessions in a SQLite database (${path.join(data, 'opencode.db')}), which mnemo does not read`,
      )
    } finally {
      t.cleanup()
    }
  })
})
