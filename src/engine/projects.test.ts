import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createManualClock } from '../core/clock.js'
import { openSqliteStore } from '../storage/sqlite/sqlite-store.js'
import { createTestEngine, hookPayload, T0, tempDir } from '../testing/test-mnemo.js'
import { MnemoEngine } from './mnemo.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

describe('the project of a working directory', () => {
  it('outside git, a folder on this machine is its own project (as its hooks file it), not a project that contains it', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const fresh = path.join(t.dir, 'fresh')
    mkdirSync(fresh)
    const clock = createManualClock(T0)
    const store = openSqliteStore({ path: ':memory:' }, () => clock.now())
    cleanups.push(() => store.close())
    const at = (cwd: string) => new MnemoEngine({ store, clock, cwd, contextBudgetTokens: 2000, timeZone: 'UTC' })
    // Something was captured with the parent folder as the working directory (a transcript run from /tmp, say).
    await at(t.dir).captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: 'tune the parent folder build' }, 's1', t.dir),
    )
    const engine = at(fresh)
    const block = await engine.context()
    expect(block.project).toBe('fresh')
    expect(block.text).not.toContain('parent folder build')
    expect((await engine.projectForPath(fresh, { workingDir: true })).root).toBe(fresh)
    // A path the user names still resolves to the project holding it.
    expect((await engine.resolveProjects(fresh)).map((p) => p.root)).toEqual([t.dir])
  })

  it('a folder not on this machine (a project captured elsewhere) still reads the project containing it', async () => {
    const { engine } = createTestEngine({ cwd: '/elsewhere/acme/src' })
    await engine.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: 'ship the acme release' }, 's1', '/elsewhere/acme'),
    )
    const block = await engine.context()
    expect(block.project).toBe('acme')
    expect(block.text).toContain('ship the acme release')
  })
})
