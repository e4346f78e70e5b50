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
})
