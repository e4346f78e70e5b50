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

  it('runs once per interval across processes on one store: skips an interval already consolidated, saying so', async () => {
    const t = tempDir()
    const mnemo = openMnemo({ home: t.dir, env: {}, timeZone: 'UTC' })
    try {
      await mnemo.engine.captureHook(
        'UserPromptSubmit',
        JSON.stringify({ session_id: 's1', cwd: '/p/shop', prompt: 'add a cart endpoint' }),
      )
      await mnemo.engine.captureHook('SessionEnd', JSON.stringify({ session_id: 's1', cwd: '/p/shop', reason: 'exit' }))
      vi.useFakeTimers()
      const intervalMs = 15 * 60_000
      const firstTurn = Math.floor((Date.now() + intervalMs) / intervalMs)
      // Two engines on the store ask for the same turn at once (replicas firing together): one runs it.
      const other = mnemo.engine.scoped({})
      const both = await Promise.all([mnemo.engine.consolidateTurn(firstTurn), other.consolidateTurn(firstTurn)])
      expect(both.filter((r) => r !== undefined)).toHaveLength(1)
      const lines: string[] = []
      const job = scheduleConsolidation(mnemo, 15, (line) => lines.push(line))
      await vi.advanceTimersByTimeAsync(intervalMs)
      expect(lines).toEqual(['consolidation skipped: another process on this database has run it in this interval'])
      expect(job.status()).toMatchObject({ lastRunAt: null, lastResult: null, lastError: null })
      await vi.advanceTimersByTimeAsync(intervalMs)
      await job.stop()
      expect(lines[1]).toMatch(/^consolidated: \d+ summaries/)
      expect(job.status().lastRunAt).not.toBeNull()
    } finally {
      await mnemo.close()
      t.cleanup()
    }
  })
})
