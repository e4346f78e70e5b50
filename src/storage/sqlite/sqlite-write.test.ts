import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import type { EventInput } from '../../core/types.js'
import { indexEvent } from '../../engine/index-event.js'
import { tempDir } from '../../testing/test-mnemo.js'
import type { Derivation, DeriveAhead, StoredEvent } from '../store.js'
import { payloadText } from './sqlite-payload.js'
import { openSqliteStore } from './sqlite-store.js'
import { dumpTables } from '../../testing/sqlite-dump.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

/** `n` prompts and tool results over a few sessions, with files, symbols and names to derive entities from. */
function events(n: number): EventInput[] {
  return Array.from({ length: n }, (_, i) => ({
    agent: 'claude-code',
    format: 'claude-hook',
    type: i % 2 === 0 ? 'UserPromptSubmit' : 'PostToolUse',
    sessionKey: `s${i % 7}`,
    project: { root: `/p/${i % 3}`, name: `p${i % 3}` },
    ts: 1_750_000_000_000 + i * 1000,
    idemKey: `e${i}`,
    payload:
      i % 2 === 0
        ? {
            session_id: `s${i % 7}`,
            cwd: `/p/${i % 3}`,
            hook_event_name: 'UserPromptSubmit',
            prompt: `Ask Maria why validateToken${i % 11} fails`,
          }
        : {
            session_id: `s${i % 7}`,
            cwd: `/p/${i % 3}`,
            hook_event_name: 'PostToolUse',
            tool_name: 'Read',
            tool_input: { file_path: `/p/${i % 3}/src/auth${i % 5}.ts` },
            tool_response: { content: `export function checkSession${i % 13}() { return parseCookie(req) }` },
          },
  }))
}

/** Every derived table's rows, and the full-text index's pages, as text. */
function dump(file: string): Record<string, string> {
  return dumpTables(file, [
    'observations',
    'sessions',
    'projects',
    'entities',
    'entity_mentions',
    'memories',
    'kept_ids',
    'search_fts_data',
    'search_fts_docsize',
  ])
}

const derive = (event: StoredEvent): Derivation => indexEvent(event, 'UTC')

/**
 * A `DeriveAhead` on this thread, which records the pages it was given (and whether their events came with payloads
 * decoded), decodes the stored payloads it is handed as the derive worker does, and can fail some events.
 */
function fakeAhead(fails: (event: StoredEvent) => boolean): DeriveAhead & { pages: number[][]; decoded: number } {
  const queue: (Derivation | undefined)[][] = []
  const pages: number[][] = []
  const ahead = {
    pages,
    decoded: 0,
    push(page: readonly StoredEvent[], stored?: readonly (string | Uint8Array)[]) {
      pages.push(page.map((e) => e.seq))
      ahead.decoded += page.filter((e) => e.payload !== undefined).length
      const withPayload = (e: StoredEvent, i: number): StoredEvent => {
        const raw = stored?.[i]
        return raw === undefined ? e : { ...e, payload: JSON.parse(payloadText(raw as string | Buffer)) }
      }
      queue.push(page.map((e, i) => (fails(e) ? undefined : derive(withPayload(e, i)))))
    },
    shift() {
      const next = queue.shift()
      if (next === undefined) throw new Error('shift without a page')
      return next
    },
  }
  return ahead
}

describe('rebuild with DeriveAhead', () => {
  it('writes the same rows with derivations made ahead as without, reading pages ahead in log order, and derives itself where the helper could not', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const files = ['plain.db', 'ahead.db'].map((f) => path.join(t.dir, f))
    for (const file of files) {
      const store = openSqliteStore({ path: file }, () => 1_750_000_000_000)
      await store.append(events(2500).map((event) => ({ event, derive: () => indexEvent(event, 'UTC') })))
      const ahead = file.endsWith('ahead.db') ? fakeAhead((e) => e.seq % 97 === 0) : undefined
      expect(await store.rebuild(derive, 3, ahead)).toEqual({ events: 2500, observations: 2500 })
      if (ahead) {
        expect(ahead.pages.map((p) => [p[0], p.at(-1)])).toEqual([
          [1, 1000],
          [1001, 2000],
          [2001, 2500],
        ])
        // The helper decodes the payloads: the store hands them over as stored.
        expect(ahead.decoded).toBe(0)
      }
      await store.close()
    }
    const [plain, withAhead] = files.map(dump)
    expect(withAhead).toEqual(plain)
  })

  it('throws the event’s own error when neither the helper nor derive can derive it, and keeps the store as it was', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const store = openSqliteStore({ path: path.join(t.dir, 'm.db') }, () => 1_750_000_000_000)
    cleanups.push(() => store.close())
    await store.append(events(1200).map((event) => ({ event, derive: () => indexEvent(event, 'UTC') })))
    const before = await store.scopeCounts()
    const broken = (event: StoredEvent): Derivation => {
      if (event.seq === 1100) throw new Error('odd payload at 1100')
      return derive(event)
    }
    await expect(
      store.rebuild(
        broken,
        3,
        fakeAhead((e) => e.seq === 1100),
      ),
    ).rejects.toThrow(/odd payload at 1100/)
    expect(await store.scopeCounts()).toEqual(before)
  })
})

describe('entity ids across appends', () => {
  /** The one number `sql` selects from the SQLite file `file`. */
  const count = (file: string, sql: string): number => {
    const db = new Database(file, { readonly: true })
    try {
      return db.prepare(sql).pluck().get() as number
    } finally {
      db.close()
    }
  }

  it('never reuses the id of an entity inserted by an append that rolled back, nor of one a forget deleted', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const file = path.join(t.dir, 'm.db')
    const store = openSqliteStore({ path: file }, () => 1_750_000_000_000)
    const all = events(40)
    const item = (event: EventInput) => ({ event, derive: () => indexEvent(event, 'UTC') })
    await store.append(all.slice(0, 10).map(item))
    // New entities (files and symbols not seen yet), then an event whose derivation throws: the batch rolls back.
    const failing = [
      ...all.slice(10, 20).map(item),
      {
        event: all[20]!,
        derive: () => {
          throw new Error('underivable')
        },
      },
    ]
    await expect(store.append(failing)).rejects.toThrow(/underivable/)
    // With a kept id of a rolled-back or deleted entity, these appends would fail (the mention's entity is missing).
    await store.append(all.slice(10, 30).map(item))
    expect(await store.deleteEvents({ projectRoot: '/p/2' })).toBeGreaterThan(0)
    // The deleted project's events again under new keys: the project gets its old id back (the same first event
    // time), and its entities must be inserted anew.
    const again = all.slice(0, 30).flatMap((e) => (e.project.root === '/p/2' ? [{ ...e, idemKey: `again-${e.idemKey}` }] : []))
    await store.append([...again, ...all.slice(30, 40)].map(item))
    await store.close()
    expect(count(file, 'SELECT count(*) FROM entity_mentions WHERE entity_id NOT IN (SELECT id FROM entities)')).toBe(0)
    // As many mentions as one append of the events kept.
    const fresh = path.join(t.dir, 'fresh.db')
    const other = openSqliteStore({ path: fresh }, () => 1_750_000_000_000)
    await other.append([...all.slice(0, 30).filter((e) => e.project.root !== '/p/2'), ...again, ...all.slice(30, 40)].map(item))
    await other.close()
    const mentions = 'SELECT count(*) FROM entity_mentions'
    expect(count(file, mentions)).toBe(count(fresh, mentions))
    expect(count(file, mentions)).toBeGreaterThan(0)
  })
})
