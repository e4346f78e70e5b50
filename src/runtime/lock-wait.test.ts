import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { runHook } from '../adapters/hooks/run-hook.js'
import { hookPayload } from '../testing/test-mnemo.js'
import { useScratch } from '../testing/scratch.js'
import { openMnemo } from './open-mnemo.js'

// Another process holds the write lock (BEGIN IMMEDIATE, as a long import or consolidate does): readers must not wait
// for it (WAL readers need no lock) and a session must still get its context. The lock wait is set to a minute here, so a
// read that waited would time the test out instead of passing slowly.
const { scratch } = useScratch()
const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3')
const holders: ChildProcess[] = []
afterEach(() => {
  for (const h of holders.splice(0)) h.kill('SIGKILL')
})

/** Starts a process that holds `db`'s write lock until killed; resolves once it holds it. */
function holdWriteLock(db: string): Promise<void> {
  const script = `const D = require(${JSON.stringify(DRIVER)}); const db = new D(${JSON.stringify(db)}); db.exec('BEGIN IMMEDIATE'); db.exec("INSERT INTO store_meta (key, value) VALUES ('held', '1') ON CONFLICT DO NOTHING"); process.stdout.write('held\\n'); setInterval(() => {}, 1000)`
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  holders.push(child)
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => c.toString().includes('held') && resolve())
    child.on('exit', (code) => reject(new Error(`lock holder exited ${code}`)))
  })
}

async function seeded(): Promise<string> {
  const home = scratch()
  const m = openMnemo({ env: { MNEMO_HOME: home, HOME: home }, cwd: '/work/demo-app' })
  await m.engine.remember('we deploy with the release script', { project: { root: '/work/demo-app', name: 'demo-app' } })
  await m.engine.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'fix the login redirect' }, 'earlier'))
  await m.close()
  return home
}

describe('while another process holds the write lock', () => {
  it('recall, context and the spool drain do not wait for it', async () => {
    const home = await seeded()
    await holdWriteLock(path.join(home, 'mnemo.db'))
    const m = openMnemo({ env: { MNEMO_HOME: home, HOME: home }, cwd: '/work/demo-app', busyTimeoutMs: 60_000 })
    try {
      m.spool.put({
        event: 'UserPromptSubmit',
        stdin: hookPayload('UserPromptSubmit', { prompt: 'spooled while locked' }, 'later'),
        cwd: '/work/demo-app',
        spooledAt: Date.now(),
      })
      const drained = await m.drainSpool()
      expect(drained).toMatchObject({
        drained: 0,
        remaining: 1,
        failed: expect.objectContaining({ message: expect.stringContaining('database is locked') }),
      })
      expect(JSON.stringify(await m.engine.recall('release script'))).toContain('we deploy with the release script')
      expect((await m.engine.context({ project: { root: '/work/demo-app', name: 'demo-app' } })).text).toContain(
        'we deploy with the release script',
      )
    } finally {
      await m.close()
    }
  })

  it('SessionStart still injects the context block, and its event waits in the spool', async () => {
    const home = await seeded()
    await holdWriteLock(path.join(home, 'mnemo.db'))
    const input = new PassThrough()
    let stdout = ''
    const run = runHook('SessionStart', {
      stdin: input,
      stdout: { write: (t: string) => (stdout += t) },
      env: { MNEMO_HOME: home, HOME: home },
      cwd: '/work/demo-app',
      exit: () => undefined,
    })
    input.end(hookPayload('SessionStart', { source: 'startup' }, 'now'))
    await run
    const out = JSON.parse(stdout) as { hookSpecificOutput: { additionalContext: string } }
    expect(out.hookSpecificOutput.additionalContext).toContain('we deploy with the release script')
    // What the block showed could not be recorded for the session's later prompts, and the error log says so.
    expect(readFileSync(path.join(home, 'logs', 'errors.jsonl'), 'utf8')).toContain(
      'the block was injected; what it showed is not recorded',
    )
    const m = openMnemo({ env: { MNEMO_HOME: home, HOME: home }, dbPath: ':memory:' })
    expect(m.spool.count()).toBe(1)
    await m.close()
  })
})
