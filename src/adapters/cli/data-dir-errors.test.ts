import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { hookPayload } from '../../testing/test-mnemo.js'
import { CAN_MAKE_UNWRITABLE, makeUnwritable } from '../../testing/unwritable.js'
import { useScratch } from '../../testing/scratch.js'
import { openMnemo } from '../../runtime/open-mnemo.js'
import { runCliCaptured } from '../../testing/run-cli.js'

const { scratch, cleanups } = useScratch()

const cli = (argv: string[], mnemoHome: string) =>
  runCliCaptured(argv, { env: { MNEMO_HOME: mnemoHome, HOME: scratch() }, cwd: '/work/demo-app' })

describe('the CLI on a data directory it cannot use', () => {
  it('names a MNEMO_HOME that is a file, with a hint, instead of "unexpected failure: EEXIST"', async () => {
    const file = path.join(scratch(), 'home-file')
    writeFileSync(file, '')
    expect(await cli(['status'], file)).toEqual({
      code: 1,
      stdout: '',
      stderr: `mnemo: MNEMO_HOME ${file} is not a directory (it is a file)\nhint: point MNEMO_HOME (or --home) at a directory, or move that file away\n`,
    })
  })

  it('refuses a Windows MNEMO_HOME in status and doctor instead of making a literal folder and saying ok', async () => {
    const given = '\\\\?\\C:\\Users\\Jane Doe\\.mnemo'
    const status = await cli(['status'], given)
    expect(status).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`holds a Windows path (${given}), which this system would create as one literal folder`),
    })
    const r = await cli(['doctor', '--json'], given)
    const doctor = JSON.parse(r.stdout) as { ok: boolean; store: { status: string; detail: string }[] }
    expect([r.code, doctor.ok, doctor.store[0]?.status]).toEqual([1, false, 'broken'])
    expect(doctor.store[0]?.detail).toContain('holds a Windows path')
  })

  it.runIf(CAN_MAKE_UNWRITABLE)('reads a store it cannot write (status, recall), and a command that writes fails saying why', async () => {
    const home = scratch()
    const m = openMnemo({ env: { MNEMO_HOME: home } })
    await m.engine.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'cache the orders endpoint' }))
    await m.close()
    cleanups.push(makeUnwritable(home)!)
    expect(await cli(['status'], home)).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/opened read-only: this user cannot write it[\s\S]*1 event /),
      stderr: '',
    })
    expect(await cli(['recall', 'orders endpoint'], home)).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('cache the orders endpoint'),
    })
    const doctor = JSON.parse((await cli(['doctor', '--json'], home)).stdout) as {
      ok: boolean
      store: { check: string; status: string; detail: string }[]
    }
    expect(doctor.ok).toBe(false)
    expect(doctor.store.find((c) => c.check === 'database')).toMatchObject({
      status: 'broken',
      detail: expect.stringMatching(/is not writable \(permission denied\), so hooks cannot capture$/),
    })
    const write = await cli(['remember', 'a new fact'], home)
    expect(write.code).toBe(1)
    expect(write.stderr).toContain(
      `(${path.join(home, 'mnemo.db')}): attempt to write a readonly database\nhint: the data directory (MNEMO_HOME) or its database is not writable by this user: commands that only read still work\n`,
    )
  })

  it.runIf(CAN_MAKE_UNWRITABLE)(
    'doctor reports a database file this user cannot write as broken, though its folder is writable',
    async () => {
      const home = scratch()
      const m = openMnemo({ env: { MNEMO_HOME: home } })
      await m.engine.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'cache the orders endpoint' }))
      await m.close()
      cleanups.push(makeUnwritable(path.join(home, 'mnemo.db'))!)
      const r = await cli(['doctor', '--json'], home)
      const doctor = JSON.parse(r.stdout) as { ok: boolean; store: { check: string; status: string; detail: string }[] }
      expect([r.code, doctor.ok]).toEqual([1, false])
      expect(doctor.store.find((c) => c.check === 'database')).toMatchObject({
        status: 'broken',
        detail: expect.stringContaining('is not writable'),
      })
    },
  )
})
