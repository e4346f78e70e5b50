import { existsSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { encodePayload } from '../storage/sqlite/sqlite-payload.js'
import type { StoredEvent } from '../storage/store.js'
import { tempDir } from '../testing/test-mnemo.js'
import { busyCores, deriveThreads, openDerivePool } from './derive-pool.js'
import { indexEvent } from './index-event.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

// A worker runs JavaScript: the pool is tested with the build's worker script (npm run build makes it).
const BUILT = new URL('../../dist/engine/derive-worker.js', import.meta.url)

function event(seq: number, payload: unknown): StoredEvent {
  return {
    seq,
    receivedAt: 1_750_000_000_000,
    agent: 'claude-code',
    format: 'claude-hook',
    type: 'UserPromptSubmit',
    sessionKey: 's1',
    project: { root: '/p/a', name: 'a' },
    ts: 1_750_000_000_000 + seq * 1000,
    idemKey: `e${seq}`,
    payload,
  }
}
const prompt = (seq: number): StoredEvent =>
  event(seq, {
    session_id: 's1',
    cwd: '/p/a',
    hook_event_name: 'UserPromptSubmit',
    prompt: `why does validateToken${seq} fail in src/auth.ts yesterday`,
  })

/** An event whose derivation throws (`indexEvent`: INVALID_INPUT, a payload its deriver cannot read). */
const unreadable = (seq: number): StoredEvent => ({
  ...event(seq, { speaker: 7, text: ['not', 'text'], dia_id: 'D1:1' }),
  agent: 'locomo',
  format: 'locomo-turn',
  type: 'turn',
})

describe.skipIf(!existsSync(fileURLToPath(BUILT)))('derive pool (the built worker)', () => {
  it('gives each page back in the order pushed, each derivation what indexEvent gives, and undefined where it throws', async () => {
    const pool = openDerivePool({ timeZone: 'Europe/Berlin', threads: 2, script: BUILT })
    if (!pool) throw new Error('no pool')
    cleanups.push(() => pool.close())
    const pages = [[prompt(1), prompt(2)], [prompt(3), unreadable(4)], [prompt(5)]]
    expect(() => indexEvent(unreadable(4), 'UTC')).toThrow(/cannot read/)
    for (const page of pages) pool.push(page)
    for (const page of pages) {
      const expected = page.map((e) => {
        try {
          return indexEvent(e, 'Europe/Berlin')
        } catch {
          return undefined
        }
      })
      expect(pool.shift()).toEqual(expected)
    }
    expect(() => pool.shift()).toThrow(/no page was pushed/)
  })

  it('decodes payloads handed over as the SQLite log stores them (text and compressed) before deriving', async () => {
    const pool = openDerivePool({ timeZone: 'UTC', threads: 1, script: BUILT })
    if (!pool) throw new Error('no pool')
    cleanups.push(() => pool.close())
    const long = event(2, { session_id: 's1', cwd: '/p/a', hook_event_name: 'UserPromptSubmit', prompt: 'validateToken '.repeat(40) })
    const page = [prompt(1), long]
    const stored = page.map((e) => encodePayload(e.payload))
    expect(stored.map((p) => typeof p)).toEqual(['string', 'object'])
    pool.push(
      page.map((e) => ({ ...e, payload: undefined })),
      stored,
    )
    expect(pool.shift()).toEqual(page.map((e) => indexEvent(e, 'UTC')))
  })

  it('answers undefined for every event once a worker cannot load, so the store derives them itself', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const script = path.join(t.dir, 'broken-worker.mjs')
    writeFileSync(
      script,
      "import { workerData } from 'node:worker_threads'\nconst s = new Int32Array(workerData.shared)\nAtomics.store(s, 1, -1)\nAtomics.notify(s, 0)\n",
    )
    const pool = openDerivePool({ timeZone: 'UTC', threads: 1, script: pathToFileURL(script) })
    if (!pool) throw new Error('no pool')
    cleanups.push(() => pool.close())
    pool.push([prompt(1), prompt(2)])
    pool.push([prompt(3)])
    expect(pool.shift()).toEqual([undefined, undefined])
    expect(pool.shift()).toEqual([undefined])
  })
})

describe('deriveThreads', () => {
  it('starts one worker per idle core besides the writer, at most 2, and none when the cores are busy', () => {
    expect(deriveThreads(2, 0.3)).toBe(1)
    expect(deriveThreads(8, 1.5)).toBe(2)
    expect(deriveThreads(8, 6.5)).toBe(1)
    expect(deriveThreads(2, 1.2)).toBe(0)
    expect(deriveThreads(2, 9)).toBe(0)
    expect(deriveThreads(1, 0)).toBe(0)
  })
})

describe('busyCores', () => {
  const core = (busy: number, idle: number) => ({ model: 'x', speed: 1, times: { user: busy, nice: 0, sys: 0, idle, irq: 0 } })
  it('sums over the cores the share of the sample each spent not idle', async () => {
    const readings = [
      [core(1000, 5000), core(2000, 9000)],
      // Core 0: 90 of 100 ticks busy; core 1: 10 of 100.
      [core(1090, 5010), core(2010, 9090)],
    ]
    const waited: number[] = []
    const busy = await busyCores(
      100,
      () => readings.shift()!,
      async (ms) => void waited.push(ms),
    )
    expect(busy).toBeCloseTo(1.0, 10)
    expect(waited).toEqual([100])
    // A machine whose first minute of load is over: both cores idle now, so one worker starts beside the writer.
    const quiet = [
      [core(0, 0), core(0, 0)],
      [core(1, 99), core(0, 100)],
    ]
    expect(
      deriveThreads(
        2,
        await busyCores(
          100,
          () => quiet.shift()!,
          async () => {},
        ),
      ),
    ).toBe(1)
  })

  it('counts nothing for cores without times or without time passed', async () => {
    const readings = [[core(5, 5)], [core(5, 5), core(9, 9)]]
    expect(
      await busyCores(
        1,
        () => readings.shift()!,
        async () => {},
      ),
    ).toBe(0)
  })
})

describe('openDerivePool', () => {
  it('starts no pool for fewer than one thread or without a worker script', () => {
    expect(openDerivePool({ timeZone: 'UTC', threads: 0, script: BUILT })).toBeUndefined()
    // From the TypeScript sources there is no derive-worker.js beside the module.
    expect(openDerivePool({ timeZone: 'UTC', threads: 1 })).toBeUndefined()
  })
})
