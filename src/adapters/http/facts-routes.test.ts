import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callRest, conforms } from '../../testing/rest-client.js'
import { startServer, type RunningServer } from './server.js'
import type { ParsedJson } from '../../testing/json.js'

// The fact routes against a real server on 127.0.0.1, port 0.
let tmp: string
let server: RunningServer
const P = '/work/trips-app'

async function api(method: string, route: string, body?: unknown): Promise<{ status: number; body: ParsedJson }> {
  const { status, body: json } = await callRest(server, method, route, body)
  return { status, body: json }
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(tmpdir(), 'mnemo-facts-http-'))
  server = await startServer({ home: path.join(tmp, 'home'), host: '127.0.0.1', port: 0, env: {} })
})

afterAll(async () => {
  await server?.close()
  if (tmp) rmSync(tmp, { recursive: true, force: true })
})

describe('/v1/facts', () => {
  it('records, describes, answers, shows, updates and deletes, each reply as documented', async () => {
    const rec = conforms(
      'POST',
      '/v1/facts/records',
      await api('POST', '/v1/facts/records', {
        project: P,
        collection: 'trips',
        records: [
          { id: 1, date: '2024-02-01', destination: 'Tokyo', nights: 4 },
          { id: 2, date: '2024-09-01', destination: 'Lima', nights: 9 },
        ],
      }),
    )
    expect(rec.records.map((r: { outcome: string }) => r.outcome)).toEqual(['created', 'created'])
    const schema = conforms('GET', '/v1/facts/schema', await api('GET', `/v1/facts/schema?project=${encodeURIComponent(P)}`))
    expect(schema.collections[0]).toMatchObject({ name: 'trips', records: 2, timeField: 'date' })
    const answer = conforms(
      'POST',
      '/v1/facts/query',
      await api('POST', '/v1/facts/query', { project: P, query: 'from trips where date in 2024-H2 sum nights', explain: true }),
    )
    expect(answer).toMatchObject({ value: 9, empty: false, coverage: { matched: 1 } })
    const id = answer.records[0]
    const updated = conforms(
      'PATCH',
      '/v1/facts/records/:id',
      await api('PATCH', `/v1/facts/records/${id}`, { project: P, values: { nights: 10 } }),
    )
    expect(updated).toMatchObject({ version: 2, values: { nights: 10 } })
    const shown = conforms('GET', '/v1/facts/records/:id', await api('GET', `/v1/facts/records/${id}?project=${encodeURIComponent(P)}`))
    expect(shown.history).toHaveLength(2)
    conforms('DELETE', '/v1/facts/records/:id', await api('DELETE', `/v1/facts/records/${id}?project=${encodeURIComponent(P)}`))
    const gone = conforms('GET', '/v1/facts/records/:id', await api('GET', `/v1/facts/records/${id}?project=${encodeURIComponent(P)}`))
    expect(gone.deleted.text).toMatch(/^you asked me to forget that on \d{4}-\d{2}-\d{2}$/)
  })

  it('answers 400 naming the field of a bad query, and 404 for an unknown collection', async () => {
    await api('POST', '/v1/facts/records', { project: P, collection: 'trips', records: { date: '2024-02-01', destination: 'Oslo' } })
    const bad = await api('POST', '/v1/facts/query', { project: P, query: 'from trips where price > 1 count' })
    expect(bad.status).toBe(400)
    expect(bad.body.error.message).toMatch(/^query: trips has no field price/)
    expect((await api('POST', '/v1/facts/query', { project: P, query: 'from flights count' })).status).toBe(404)
  })

  it("states dependent facts, lists a fact's dependants with their status, and resolves an uncertain one", async () => {
    const Q = `?project=${encodeURIComponent(P)}`
    for (const [key, value] of [
      ['fare', '840 USD'],
      ['trip_total', '1290 USD'],
    ])
      conforms('POST', '/v1/facts/state/:key', await api('POST', `/v1/facts/state/${key}`, { project: P, value }))
    await server.engine.facts.dependencies.addRule(
      { source: 'fare', target: 'trip_total', effect: 'uncertain' },
      { project: await server.engine.projectForWrite(P) },
    )
    const set = conforms('POST', '/v1/facts/state/:key', await api('POST', '/v1/facts/state/fare', { project: P, value: '910 USD' }))
    expect(set.changes.map((c: { key: string; certainty: string }) => `${c.key}:${c.certainty}`)).toEqual([
      'fare:known',
      'trip_total:uncertain',
    ])
    const state = conforms('GET', '/v1/facts/state/:key', await api('GET', `/v1/facts/state/fare${Q}`))
    expect(state.dependants).toMatchObject([{ key: 'trip_total', via: 'fare', status: 'uncertain', value: '1290 USD' }])
    const resolved = conforms(
      'POST',
      '/v1/facts/state/:key/resolve',
      await api('POST', '/v1/facts/state/trip_total/resolve', { project: P, value: '1350 USD' }),
    )
    expect(resolved.changes[0]).toMatchObject({ key: 'trip_total', before: '1290 USD', after: '1350 USD', certainty: 'known' })
    const after = conforms('GET', '/v1/facts/state/:key', await api('GET', `/v1/facts/state/fare${Q}`))
    expect(after.dependants).toMatchObject([{ key: 'trip_total', status: 'current', value: '1350 USD' }])
    const refused = await api('POST', '/v1/facts/state/trip_total/resolve', { project: P })
    expect(refused.status).toBe(400)
    expect(refused.body.error.message).toMatch(/^trip_total \(record fct_\w+\)\.certainty is known, not uncertain/)
    expect((await api('POST', '/v1/facts/state/nope/resolve', { project: P })).status).toBe(404)
  })

  it("lists a collection's records by state, sorted and paged, scoped to the project", async () => {
    const L = 'ledger-app'
    const at = (q: string): string => `/v1/facts/collections/flights/records?project=${L}${q}`
    const added = await api('POST', '/v1/facts/records', {
      project: `/work/${L}`,
      collection: 'flights',
      records: [
        { code: 'NH10', day: '2024-03-01', to: 'Tokyo', fare: 820 },
        { code: 'LA20', day: '2024-05-09', to: 'Lima', fare: 1290.5 },
        { code: 'BA30', day: '2024-07-15', to: 'London', fare: 410 },
        { code: 'AF40', day: '2024-09-02', to: 'Paris' },
      ],
    })
    expect(added.status).toBe(201)
    const [tokyo, lima, , paris] = added.body.records.map((r: { id: string }) => r.id)
    await api('PATCH', `/v1/facts/records/${tokyo}`, { project: `/work/${L}`, values: { fare: 905 } })
    await server.engine.facts.retract(lima, { project: await server.engine.projectForWrite(`/work/${L}`) })
    await api('DELETE', `/v1/facts/records/${paris}?project=${L}`)

    const current = conforms('GET', '/v1/facts/collections/:name/records', await api('GET', at('&sort=fare&order=desc')))
    expect(current).toMatchObject({ collection: 'flights', state: 'current', total: 2, offset: 0, deleted: [] })
    expect(current.records.map((r: { values: { to: string; fare: number } }) => `${r.values.to} ${r.values.fare}`)).toEqual([
      'Tokyo 905',
      'London 410',
    ])
    expect(current.records[0]).toMatchObject({ id: tokyo, version: 2, provenance: { source: 'user' } })
    const page2 = (await api('GET', at('&sort=fare&order=asc&offset=1&limit=1'))).body
    expect(page2.records.map((r: { values: { to: string } }) => r.values.to)).toEqual(['Tokyo'])
    expect(page2.total).toBe(2)

    const superseded = conforms('GET', '/v1/facts/collections/:name/records', await api('GET', at('&state=superseded&sort=code')))
    // Lima's assert that the retract replaced, and Tokyo's first fare.
    expect(superseded.records.map((r: { id: string; version: number; supersededAt?: number }) => [r.id, r.version])).toEqual([
      [lima, 1],
      [tokyo, 1],
    ])
    expect(superseded.records[1].values.fare).toBe(820)
    expect(superseded.records.every((r: { supersededAt?: number }) => typeof r.supersededAt === 'number')).toBe(true)
    const retracted = (await api('GET', at('&state=retracted'))).body
    expect(retracted.records.map((r: { id: string }) => r.id)).toEqual([lima])
    expect(typeof retracted.records[0].retractedAt).toBe('number')
    const deleted = conforms('GET', '/v1/facts/collections/:name/records', await api('GET', at('&state=deleted')))
    expect(deleted).toMatchObject({
      records: [],
      total: 1,
      deleted: [{ id: paris, text: expect.stringMatching(/^you asked me to forget that on \d{4}-/) }],
    })
    expect(JSON.stringify(deleted)).not.toContain('Paris')

    // Another project has no such collection: nothing crosses projects.
    const other = await api('GET', `/v1/facts/collections/flights/records?project=${encodeURIComponent(P)}`)
    expect(other.status).toBe(404)
    expect(other.body.error.message).toMatch(/^no collection flights in this project/)
  })

  it('refuses a bad listing with a 400 naming the value', async () => {
    await api('POST', '/v1/facts/records', {
      project: P,
      collection: 'trips',
      records: { date: '2024-04-01', destination: 'Quito', tags: ['andes'], booked: true },
    })
    const Q = `?project=${encodeURIComponent(P)}`
    const cases: [string, RegExp][] = [
      ['&sort=pricee', /^trips has no field pricee to sort by \(fields: /],
      ['&sort=tags', /^trips\.tags is a list; sort by a field with one value/],
      ['&sort=booked', /^trips\.booked is a boolean; sort by another field, or query: where booked = true/],
      ['&state=archived', /^state must be one of current, retracted, superseded, deleted \(got "archived"\)/],
      ['&order=up', /^order must be one of asc, desc \(got "up"\)/],
      ['&limit=0', /^limit must be an integer 1–1000 \(got 0\)/],
      ['&offset=-1', /^offset must be an integer 0–10000000 \(got -1\)/],
    ]
    for (const [q, message] of cases) {
      const r = await api('GET', `/v1/facts/collections/trips/records${Q}${q}`)
      expect(r.status, q).toBe(400)
      expect(r.body.error.message, q).toMatch(message)
    }
    const missing = await api('GET', `/v1/facts/collections/trips/records`)
    expect(missing.status).toBe(400)
    expect(missing.body.error.message).toMatch(/project/)
    expect((await api('GET', `/v1/facts/collections/nope/records${Q}`)).status).toBe(404)
  })
})
