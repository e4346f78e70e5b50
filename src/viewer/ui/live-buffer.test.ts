import { describe, expect, it } from 'vitest'
import { mergeNewest } from './live-buffer.js'

const row = (id: string, time: string) => ({ id, time })

describe('mergeNewest', () => {
  it('keeps newest first and drops ids already listed', () => {
    const rows = [row('obs_2', '2026-01-01T00:00:02Z'), row('obs_1', '2026-01-01T00:00:01Z')]
    const merged = mergeNewest(rows, [row('obs_3', '2026-01-01T00:00:03Z'), row('obs_2', '2026-01-01T00:00:02Z')])
    expect(merged.map((r) => r.id)).toEqual(['obs_3', 'obs_2', 'obs_1'])
  })

  it('returns the same array when nothing is new', () => {
    const rows = [row('obs_1', '2026-01-01T00:00:01Z')]
    expect(mergeNewest(rows, [])).toBe(rows)
    expect(mergeNewest(rows, [row('obs_1', '2026-01-01T00:00:01Z')])).toBe(rows)
  })

  it('keeps at most the cap, dropping the oldest', () => {
    const many = Array.from({ length: 10 }, (_, i) => row(`obs_${i}`, `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`))
    const merged = mergeNewest([], many, 4)
    expect(merged.map((r) => r.id)).toEqual(['obs_9', 'obs_8', 'obs_7', 'obs_6'])
  })

  it('orders rows of the same time by id, newest id first', () => {
    const t = '2026-01-01T00:00:00Z'
    expect(mergeNewest([row('obs_a', t)], [row('obs_b', t)]).map((r) => r.id)).toEqual(['obs_b', 'obs_a'])
  })
})
