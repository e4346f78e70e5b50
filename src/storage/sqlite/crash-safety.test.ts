import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../../testing/test-mnemo.js'
import { openSqliteStore } from './sqlite-store.js'

// Kills writer processes with SIGKILL at random points (after a random number of
// acknowledged events, from a seeded generator: no timers) and checks that every
// acknowledged event survived and the database passes SQLite's integrity check.
const ROOT = path.resolve(import.meta.dirname, '../../..')
const OPEN = path.join(ROOT, 'dist/runtime/open-mnemo.js')

const WRITER = `
const { openMnemo } = await import(${JSON.stringify(OPEN)})
const m = openMnemo({ env: { MNEMO_HOME: process.env.MNEMO_HOME } })
const id = process.argv[1]
for (let i = 0; ; i++) {
  const payload = JSON.stringify({ session_id: 'crash-' + id, cwd: '/p/crash', tool_name: 'Bash', tool_use_id: id + '-' + i, tool_input: { command: 'echo ' + i }, tool_response: { stdout: 'x'.repeat(i % 7 * 300) } })
  try {
    await m.engine.captureHook('PostToolUse', payload)
  } catch (error) {
    // On a loaded machine a lock wait can time out: not acknowledged, so not counted; a hook would spool it.
    if (error.code !== 'STORE_UNAVAILABLE') throw error
    continue
  }
  process.stdout.write('ack ' + id + '-' + i + '\\n')
}
`

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})
beforeAll(() => {
  if (!existsSync(OPEN)) throw new Error(`${OPEN} is missing: run \`npm run build\` first (npm test does)`)
})

/** Runs a writer until it has acknowledged `after` events, then SIGKILLs it. Resolves with the acknowledged keys. */
function killAfter(home: string, id: string, after: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', WRITER, id], {
      env: { PATH: process.env['PATH'], MNEMO_HOME: home },
    })
    const acked: string[] = []
    let buffer = ''
    let killed = false
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString()
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl)
        buffer = buffer.slice(nl + 1)
        if (line.startsWith('ack ')) acked.push(line.slice(4))
        if (acked.length >= after && !killed) {
          killed = true
          child.kill('SIGKILL')
        }
      }
    })
    child.on('error', reject)
    child.on('close', (_code, signal) =>
      signal === 'SIGKILL' ? resolve(acked) : reject(new Error(`writer ${id} exited without being killed`)),
    )
  })
}

describe('crash safety', () => {
  it('loses no acknowledged event and leaves a sound database when writers are killed at random points', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    let seed = 42
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return 1 + (seed % n)
    }
    const acknowledged: string[] = []
    for (let round = 0; round < 6; round++) {
      // Three writers at once, each killed after a different random number of events.
      const batch = await Promise.all([0, 1, 2].map((w) => killAfter(t.dir, `r${round}w${w}`, next(40))))
      acknowledged.push(...batch.flat())
    }
    const store = openSqliteStore({ path: path.join(t.dir, 'mnemo.db') })
    try {
      expect(await store.integrityCheck()).toBe('ok')
      const stored = new Set((await store.readEvents(0, 100_000)).map((e) => e.idemKey.split(':').pop()))
      const lost = acknowledged.filter((k) => !stored.has(k))
      expect(lost).toEqual([])
      expect(acknowledged.length).toBeGreaterThan(18)
    } finally {
      await store.close()
    }
  })
})
