import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { hookPayload } from '../testing/test-mnemo.js'
import { CAN_MAKE_UNWRITABLE, makeUnwritable } from '../testing/unwritable.js'
import { useScratch } from '../testing/scratch.js'
import { openMnemo } from './open-mnemo.js'

const { scratch, cleanups } = useScratch()

/** A data directory with one prompt stored, closed (so no WAL file is left), then made unwritable. */
async function readOnlyStore(): Promise<string> {
  const home = scratch()
  const m = openMnemo({ env: { MNEMO_HOME: home, HOME: home } })
  await m.engine.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'cache the orders endpoint' }))
  await m.close()
  cleanups.push(makeUnwritable(home)!)
  return home
}

describe('openMnemo on a data directory it cannot use', () => {
  it('names a data directory that is a file, with a hint, instead of EEXIST', () => {
    const file = path.join(scratch(), 'home-file')
    writeFileSync(file, '')
    for (const readOnlyFallback of [false, true]) {
      expect(() => openMnemo({ env: { MNEMO_HOME: file }, readOnlyFallback })).toThrow(
        expect.objectContaining({ code: 'STORE_UNAVAILABLE', message: `MNEMO_HOME ${file} is not a directory (it is a file)` }),
      )
    }
  })

  it.runIf(CAN_MAKE_UNWRITABLE)('says the data directory is not writable, instead of "unable to open database file"', async () => {
    const home = await readOnlyStore()
    expect(() => openMnemo({ env: { MNEMO_HOME: home } })).toThrow(
      expect.objectContaining({ code: 'STORE_UNAVAILABLE', message: `MNEMO_HOME ${home} is not writable (permission denied)` }),
    )
  })

  it.runIf(CAN_MAKE_UNWRITABLE)(
    'with readOnlyFallback reads it (a snapshot, removed on close), and a write fails naming the real database and the cause',
    async () => {
      const home = await readOnlyStore()
      const before = readdirSync(os.tmpdir()).filter((f) => f.startsWith('mnemo-readonly-')).length
      const m = openMnemo({ env: { MNEMO_HOME: home }, readOnlyFallback: true })
      try {
        expect(m.readOnly).toBe(true)
        expect(await m.engine.stats()).toMatchObject({ events: 1, observations: 1 })
        expect((await m.engine.recall('orders endpoint', { limit: 1 })).map((h) => h.snippet)).toEqual(['cache the orders endpoint'])
        await expect(m.engine.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'another' }))).rejects.toThrow(
          expect.objectContaining({
            message: expect.stringContaining(`(${path.join(home, 'mnemo.db')}): attempt to write a readonly database`),
            hint: expect.stringContaining('not writable by this user'),
          }),
        )
      } finally {
        await m.close()
      }
      expect(readdirSync(os.tmpdir()).filter((f) => f.startsWith('mnemo-readonly-')).length).toBe(before)
      expect(existsSync(path.join(home, 'mnemo.db-wal'))).toBe(false)
    },
  )
})

describe('drainSpool', () => {
  it('gives calls made while a drain runs that drain, and starts a new one after it', async () => {
    const home = scratch()
    const m = openMnemo({ env: { MNEMO_HOME: home, HOME: home } })
    try {
      const put = (id: string) =>
        m.spool.put({
          event: 'PostToolUse',
          stdin: hookPayload('PostToolUse', {
            tool_name: 'Bash',
            tool_input: { command: `echo ${id}` },
            tool_response: 'ok',
            tool_use_id: id,
          }),
          cwd: '/work/demo-app',
          spooledAt: 1_700_000_000_000,
        })
      put('t1')
      put('t2')
      const first = m.drainSpool()
      expect(m.drainSpool()).toBe(first)
      expect(await first).toEqual({ drained: 2, remaining: 0 })
      put('t3')
      const second = m.drainSpool()
      expect(second).not.toBe(first)
      expect(await second).toEqual({ drained: 1, remaining: 0 })
      expect(await m.engine.stats()).toMatchObject({ events: 3, observations: 3 })
    } finally {
      await m.close()
    }
  })
})
