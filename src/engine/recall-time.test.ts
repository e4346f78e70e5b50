import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { describe, expect, it } from 'vitest'
import { createMcpServer } from '../adapters/mcp/mcp-server.js'
import { createTestEngine, hookPayload } from '../testing/test-mnemo.js'

// Time phrases in a query, with a zone far from UTC and a fixed now (issue 17 item 9): each range the
// query names is read, a query that is only a time lists what happened then, and what recall could not
// read, or found nothing in, is said as a warning.

const DAY = 86_400_000

/** A store with one prompt a day, at 09:00 Tokyo time, from 2025-02-10 to 2025-03-01 (now: 2025-03-01 12:00 Tokyo). */
async function tokyoStore(timeZone = 'Asia/Tokyo') {
  const { engine, clock } = createTestEngine({ timeZone })
  const first = Date.parse('2025-02-10T00:00:00Z') // 09:00 in Tokyo
  clock.set(first)
  const ids: { day: string; ts: number }[] = []
  for (let i = 0; i < 20; i++) {
    const ts = first + i * DAY
    clock.set(ts)
    const day = new Date(ts + 9 * 3_600_000).toISOString().slice(0, 10)
    await engine.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: `daily standup note number ${i} for the billing service` }, `s${i}`),
    )
    ids.push({ day, ts })
  }
  clock.set(Date.parse('2025-03-01T03:00:00Z'))
  return { engine, clock, ids }
}

const days = (hits: { ts: number }[], zone = 'Asia/Tokyo'): string[] =>
  [...new Set(hits.map((h) => new Intl.DateTimeFormat('sv-SE', { timeZone: zone }).format(new Date(h.ts))))].sort()

describe('time phrases in recall', () => {
  it('"past 7 days" and "since 2025-02-21" are spans up to now, in MNEMO_TZ', async () => {
    const { engine } = await tokyoStore()
    const past = await engine.recall('past 7 days', { limit: 100 })
    expect(days(past)).toEqual([
      '2025-02-22',
      '2025-02-23',
      '2025-02-24',
      '2025-02-25',
      '2025-02-26',
      '2025-02-27',
      '2025-02-28',
      '2025-03-01',
    ])
    expect(past.warnings).toEqual([])
    const since = await engine.recall('since 2025-02-21', { limit: 100 })
    expect(days(since)).toEqual([
      '2025-02-21',
      '2025-02-22',
      '2025-02-23',
      '2025-02-24',
      '2025-02-25',
      '2025-02-26',
      '2025-02-27',
      '2025-02-28',
      '2025-03-01',
    ])
    // Newest first: a time alone lists what happened then.
    expect(since.map((h) => h.ts)).toEqual([...since.map((h) => h.ts)].sort((a, b) => b - a))
    expect(days(await engine.recall('what happened before 2025-02-12', { limit: 100 }))).toEqual(['2025-02-10', '2025-02-11'])
    expect(days(await engine.recall('between 2025-02-14 and 2025-02-16', { limit: 100 }))).toEqual([
      '2025-02-14',
      '2025-02-15',
      '2025-02-16',
    ])
    // A question with a time still matches its words; the time only ranks.
    expect((await engine.recall('billing standup since 2025-02-27', { limit: 3 }))[0]!.snippet).toContain('billing')
  })

  it('a time recall cannot read, or a range with nothing in it, is said, not silent', async () => {
    const { engine } = await tokyoStore()
    const sprints = await engine.recall('in 30 sprints', { limit: 10 })
    expect([...sprints]).toEqual([])
    expect(sprints.warnings).toEqual([
      'could not read "in 30 sprints" as a time (recall reads dates, weekdays, and numbers of hours, days, weeks, months or years): its words were searched instead',
    ])
    const future = await engine.recall('since 2025-03-05', { limit: 10 })
    expect([...future]).toEqual([])
    expect(future.warnings).toEqual([
      'nothing was recorded in this scope for "since 2025-03-05" (2025-03-05 00:00 to 2025-03-06 00:00, Asia/Tokyo)',
    ])
  })

  it('"last Tuesday" fused returns only that day, in America/Los_Angeles as with --channels time', async () => {
    const { engine, clock } = createTestEngine({ timeZone: 'America/Los_Angeles' })
    // Tuesday 2025-02-25 in Los Angeles; the other prompts mention Tuesday or "last" but are of other days.
    const at = async (iso: string, prompt: string, key: string) => {
      clock.set(Date.parse(iso))
      await engine.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt }, key))
    }
    await at('2025-02-25T18:00:00Z', 'rotate the staging certificates', 'a')
    await at('2025-02-26T05:00:00Z', 'the last deploy of the evening went fine', 'b') // still Tuesday 21:00 in LA
    await at('2025-02-26T09:00:00Z', 'on Tuesday we will review the last migration', 'c') // Wednesday 01:00 in LA
    await at('2025-02-18T18:00:00Z', 'Tuesday planning: the last sprint review', 'd')
    clock.set(Date.parse('2025-02-28T20:00:00Z'))
    const fused = await engine.recall('last Tuesday', { limit: 10 })
    const timeOnly = await engine.recall('last Tuesday', { limit: 10, channels: ['time'] })
    expect(days(fused, 'America/Los_Angeles')).toEqual(['2025-02-25'])
    expect(fused.map((h) => h.id).sort()).toEqual(timeOnly.map((h) => h.id).sort())
    expect(fused).toHaveLength(2)
  })

  it('MCP memory_recall returns the warnings with the hits', async () => {
    const { engine } = await tokyoStore()
    const server = createMcpServer(engine, '/work/demo-app')
    const [a, b] = InMemoryTransport.createLinkedPair()
    await server.connect(a)
    const client = new Client({ name: 't', version: '0' })
    await client.connect(b)
    const past = (await client.callTool({ name: 'memory_recall', arguments: { query: 'past 7 days', limit: 100 } })).structuredContent as {
      hits: unknown[]
      warnings: string[]
    }
    expect([past.hits.length, past.warnings]).toEqual([8, []])
    const sprints = (await client.callTool({ name: 'memory_recall', arguments: { query: 'in 30 sprints' } })).structuredContent as {
      hits: unknown[]
      warnings: string[]
    }
    expect(sprints.hits).toEqual([])
    expect(sprints.warnings[0]).toMatch(/^could not read "in 30 sprints" as a time/)
    await client.close()
  })
})

describe('the library', () => {
  it('recall(42) and remember(42) throw a MnemoError naming the problem, not a TypeError', async () => {
    const { engine } = createTestEngine()
    await expect(engine.recall(42 as unknown as string)).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: 'query must be a string (got number)',
    })
    await expect(engine.remember(42 as unknown as string)).rejects.toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT', message: 'memory text must be a string (got number)' }),
    )
  })
})
