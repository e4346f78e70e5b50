import { closeSync, openSync, readdirSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { openMnemo } from '../../runtime/open-mnemo.js'
import { hookPayload } from '../../testing/test-mnemo.js'
import { useScratch } from '../../testing/scratch.js'
import { runCli } from '../cli/program.js'
import { runHook } from './run-hook.js'

// Issue 17 item 14: a hook appending into a database with damaged pages must not be silent, and doctor finds damage.
const { scratch } = useScratch()
const PAGE = 4096

/** A store with enough events to span many pages, closed (WAL checkpointed into the file). */
async function filledStore(): Promise<{ home: string; db: string }> {
  const home = scratch()
  const m = openMnemo({ env: { MNEMO_HOME: home } })
  for (let i = 0; i < 200; i++)
    await m.engine.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: `prompt ${i} about the orders service cache ${'x'.repeat(300)}` }, `s${i % 5}`),
    )
  expect(await m.engine.integrityCheck()).toBe('ok')
  await m.close()
  return { home, db: path.join(home, 'mnemo.db') }
}

/** Overwrites the body of pages `from`..`to` (1-based; the 100-byte file header of page 1 is never touched) with garbage. */
function damage(db: string, from: number, to: number): void {
  const fd = openSync(db, 'r+')
  try {
    for (let p = from; p <= to; p++) writeSync(fd, Buffer.alloc(PAGE - 200, 0xa5), 0, PAGE - 200, (p - 1) * PAGE + 100)
  } finally {
    closeSync(fd)
  }
}

async function hook(home: string, prompt: string): Promise<number | undefined> {
  const input = new PassThrough()
  let code: number | undefined
  const run = runHook('UserPromptSubmit', {
    stdin: input,
    stdout: { write: () => {} },
    env: { MNEMO_HOME: home, HOME: home },
    cwd: '/work/demo-app',
    exit: (c) => (code = c),
  })
  input.end(hookPayload('UserPromptSubmit', { prompt }, 'damaged'))
  await run
  return code
}

async function doctor(home: string): Promise<{ code: number; checks: { check: string; status: string; detail: string; fix: string }[] }> {
  let stdout = ''
  const code = await runCli(['doctor', '--json'], {
    stdout: (t) => (stdout += t),
    stderr: () => {},
    env: { MNEMO_HOME: home, HOME: home },
    cwd: '/work/demo-app',
  })
  return { code, checks: (JSON.parse(stdout) as { store: { check: string; status: string; detail: string; fix: string }[] }).store }
}

describe('a database with damaged pages', () => {
  it('a hook whose append meets the damage logs it (naming the file, with the repair) and spools the event', async () => {
    const { home, db } = await filledStore()
    const pages = statSync(db).size / PAGE
    damage(db, 2, pages)
    expect(await hook(home, 'a prompt into a damaged store')).toBe(0)
    const spooled = readdirSync(path.join(home, 'spool')).filter((f) => f.endsWith('.json'))
    expect(spooled).toHaveLength(1)
    expect(readFileSync(path.join(home, 'spool', spooled[0]!), 'utf8')).toContain('a prompt into a damaged store')
    const log = readFileSync(path.join(home, 'logs', 'errors.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { code: string; message: string; hint?: string })
    expect(log.at(-1)).toMatchObject({ code: 'STORE_UNAVAILABLE', message: expect.stringContaining(`the database ${db} is damaged`) })
    expect(JSON.stringify(log.at(-1))).toContain('mnemo doctor')
    const d = await doctor(home)
    expect(d.code).toBe(1)
    expect(d.checks.find((c) => c.check === 'database' || c.status === 'broken')).toMatchObject({ status: 'broken' })
  })

  it('doctor finds damage in a page no hook touched, and the repair it names works as written', async () => {
    const { home, db } = await filledStore()
    const cli = async (argv: string[]): Promise<number> =>
      runCli(argv, { stdout: () => {}, stderr: () => {}, env: { MNEMO_HOME: home, HOME: home }, cwd: home })
    const backup = path.join(scratch(), 'last-export.jsonl')
    expect(await cli(['export', '--out', backup])).toBe(0)
    const pages = statSync(db).size / PAGE
    damage(db, Math.floor(pages / 2), Math.floor(pages / 2))
    const d = await doctor(home)
    expect(d.code).toBe(1)
    const database = d.checks.find((c) => c.check === 'database')
    expect(database).toMatchObject({ status: 'broken', detail: expect.stringContaining(`${db} is damaged: `) })
    expect(database!.fix).toBe(
      `move ${db} aside (mnemo then starts an empty store) and restore your last export with mnemo import <export file>`,
    )
    renameSync(db, `${db}.damaged`)
    expect(await cli(['import', backup])).toBe(0)
    expect((await doctor(home)).checks.find((c) => c.check === 'database')).toMatchObject({ status: 'ok' })
    const m = openMnemo({ env: { MNEMO_HOME: home } })
    expect(await m.engine.stats()).toMatchObject({ events: 200 })
    await m.close()
  })
})
