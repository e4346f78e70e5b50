import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { describe, expect, it } from 'vitest'
import { createTestEngine } from '../../testing/test-mnemo.js'
import { createMcpServer } from './mcp-server.js'

async function connect() {
  const t = createTestEngine({ cwd: '/work/demo-app' })
  const server = createMcpServer(t.engine, '/work/demo-app')
  const [a, b] = InMemoryTransport.createLinkedPair()
  await server.connect(a)
  const client = new Client({ name: 't', version: '0' })
  await client.connect(b)
  const call = async (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args })
  return { ...t, client, call }
}

describe('fact tools', () => {
  it('records, lists the schema an agent can write a query from, answers, updates and deletes', async () => {
    const { client, call } = await connect()
    const recorded = await call('facts_record', {
      collection: 'flights',
      records: [
        { id: 1, date: '2024-03-01', to: 'Tokyo', cost_usd: 900 },
        { id: 2, date: '2024-07-09', to: 'Osaka', cost_usd: 650.5 },
        { id: 3, date: '2025-01-02', to: 'Tokyo', cost_usd: 1010 },
      ],
    })
    expect(recorded.isError).toBeFalsy()
    const schema = (await call('facts_schema', {})).structuredContent as {
      collections: { name: string; records: number; fields: { name: string; type: string; examples: unknown[] }[] }[]
      grammar: string
    }
    expect(schema.collections[0]).toMatchObject({ name: 'flights', records: 3 })
    expect(schema.collections[0]!.fields.find((f) => f.name === 'cost_usd')).toEqual({
      name: 'cost_usd',
      type: 'money (USD)',
      examples: [900, 650.5, 1010],
    })
    expect(schema.grammar).toContain('group by')
    const answer = (await call('facts_query', { query: 'from flights where to = "Tokyo" and date in 2024 count' })).structuredContent as {
      value: number
      records: string[]
      coverage: { sources: string[] }
    }
    expect(answer.value).toBe(1)
    expect(answer.coverage.sources).toEqual(['agent'])
    const id = answer.records[0]!
    expect((await call('facts_update', { id, values: { cost_usd: 950 } })).isError).toBeFalsy()
    expect(((await call('facts_query', { query: 'from flights sum cost_usd' })).structuredContent as { value: number }).value).toBe(2610.5)
    expect((await call('facts_delete', { id })).isError).toBeFalsy()
    expect(((await call('facts_query', { query: 'from flights count' })).structuredContent as { value: number }).value).toBe(2)
    await client.close()
  })

  it('returns a readable error naming the field of a bad query or record', async () => {
    const { client, call } = await connect()
    await call('facts_record', { collection: 'flights', records: { date: '2024-03-01', to: 'Tokyo' } })
    const bad = await call('facts_query', { query: 'from flights where price > 3 count' })
    expect(bad.isError).toBe(true)
    expect((bad.content as { text: string }[])[0]!.text).toMatch(/^Invalid arguments: query: flights has no field price/)
    const wrong = await call('facts_record', { collection: 'flights', records: { date: 'soon', to: 'Kyoto' } })
    expect((wrong.content as { text: string }[])[0]!.text).toBe('Invalid arguments: flights record 1.date must be date (got "soon")')
    await client.close()
  })

  it("shows a fact's dependants with their status, and confirms or re-resolves an uncertain one", async () => {
    const again = await connect()
    const tools = (await again.client.listTools()).tools
    expect(tools.find((t) => t.name === 'facts_state')!.description).toContain("status 'uncertain' means something it depended on changed")
    expect((await again.call('facts_state_set', { key: 'fare', value: '840 USD' })).isError).toBeFalsy()
    await again.call('facts_state_set', { key: 'trip_total', value: '1290 USD' })
    await again.call('facts_state_set', { key: 'hotel_total', value: '300 USD' })
    // Rules are stated on the CLI or by the library; the tools see their effect.
    await again.engine.facts.dependencies.addRule({ source: 'fare', target: 'trip_total', effect: 'uncertain' })
    await again.engine.facts.dependencies.addRule({ source: 'trip_total', target: 'hotel_total', effect: 'uncertain' })
    again.clock.advance(86_400_000)
    const set = (await again.call('facts_state_set', { key: 'fare', value: '910 USD' })).structuredContent as {
      changes: { key: string; certainty: string }[]
    }
    expect(set.changes.map((c) => `${c.key}:${c.certainty}`)).toEqual(['fare:known', 'trip_total:uncertain', 'hotel_total:uncertain'])
    const state = (await again.call('facts_state', { key: 'fare' })).structuredContent as {
      answer: { text: string }
      dependants: { key: string; via: string; status: string; text: string }[]
    }
    expect(state.answer.text).toBe('910 USD')
    expect(state.dependants).toEqual([
      {
        key: 'trip_total',
        via: 'fare',
        effect: 'uncertain',
        status: 'uncertain',
        value: '1290 USD',
        text: 'unknown now: it was 1290 USD, but it depended on fare, which changed to 910 USD on 2025-06-15',
      },
      {
        key: 'hotel_total',
        via: 'trip_total',
        effect: 'uncertain',
        status: 'uncertain',
        value: '300 USD',
        text: 'unknown now: it was 300 USD, but it depended on trip_total, which became unknown on 2025-06-15',
      },
    ])
    expect((await again.call('facts_state_resolve', { key: 'trip_total' })).structuredContent).toEqual({
      changes: [{ key: 'trip_total', before: '1290 USD', after: '1290 USD', certainty: 'known' }],
    })
    const resolved = (await again.call('facts_state_resolve', { key: 'hotel_total', value: '320 USD' })).structuredContent as {
      changes: { key: string; after: string }[]
    }
    expect(resolved.changes[0]).toMatchObject({ key: 'hotel_total', after: '320 USD' })
    const after = (await again.call('facts_state', { key: 'fare' })).structuredContent as {
      dependants: { key: string; status: string; text: string }[]
    }
    expect(after.dependants.map((d) => `${d.key}:${d.status}:${d.text}`)).toEqual([
      'trip_total:current:1290 USD',
      'hotel_total:current:320 USD',
    ])
    const refused = await again.call('facts_state_resolve', { key: 'trip_total' })
    expect(refused.isError).toBe(true)
    expect((refused.content as { text: string }[])[0]!.text).toMatch(
      /trip_total \(record fct_\w+\)\.certainty is known, not uncertain: it is "1290 USD"/,
    )
    const missing = await again.call('facts_state_resolve', { key: 'nope' })
    expect((missing.content as { text: string }[])[0]!.text).toContain('no fact nope is recorded')
    const empty = await again.call('facts_state_resolve', { key: 'fare', value: '' })
    expect(empty.isError).toBe(true)
    expect((empty.content as { text: string }[])[0]!.text).toMatch(/value/)
    await again.client.close()
  })
})
