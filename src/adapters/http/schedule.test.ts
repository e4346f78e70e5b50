import { afterEach, describe, expect, it, vi } from 'vitest'
import { openMnemo } from '../../runtime/open-mnemo.js'
import { tempDir } from '../../testing/test-mnemo.js'
import { scheduleConsolidation } from './server.js'

afterEach(() => {
  vi.useRealTimers()
})

describe('background consolidation in mnemo serve', () => {
  it('summarises a finished session on the schedule, and stops cleanly', async () => {
    const t = tempDir()
    const mnemo = openMnemo({ home: t.dir, env: {}, timeZone: 'UTC' })
    try {
      await mnemo.engine.captureHook(
        'UserPromptSubmit',
        JSON.stringify({ session_id: 's1', cwd: '/p/shop', prompt: 'add a cart endpoint' }),
      )
      await mnemo.engine.captureHook('SessionEnd', JSON.stringify({ session_id: 's1', cwd: '/p/shop', reason: 'exit' }))
      vi.useFakeTimers()
      const job = scheduleConsolidation(mnemo, 15, undefined)
      expect(job.status()).toMatchObject({
        name: 'consolidate',
        everyMinutes: 15,
        running: false,
        lastRunAt: null,
        lastResult: null,
        lastError: null,
      })
      expect(job.status().nextRunAt).not.toBeNull()
      expect((await mnemo.engine.recall('Session cart endpoint')).some((h) => h.kind === 'summary')).toBe(false)
      await vi.advanceTimersByTimeAsync(15 * 60_000)
      await job.stop()
      expect(job.status()).toMatchObject({ running: false, lastError: null, nextRunAt: null })
      expect(job.status().lastRunAt).not.toBeNull()
      expect(job.status().lastResult).toMatch(/^1 summaries, \d+ lessons, \d+ procedures, \d+ archived$/)
      vi.useRealTimers()
      expect((await mnemo.engine.recall('Session cart endpoint')).some((h) => h.kind === 'summary')).toBe(true)
    } finally {
      await mnemo.close()
      t.cleanup()
    }
  })
})
