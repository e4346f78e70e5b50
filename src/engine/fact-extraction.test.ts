import type { ServerResponse } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { createManualClock } from '../core/clock.js'
import { createLlmConsolidator } from '../lifecycle/llm-consolidator.js'
import { openSqliteStore } from '../storage/sqlite/sqlite-store.js'
import { type ChatRequest, closeFakeChats, fakeChat, llmAt, reply } from '../testing/fake-chat.js'
import { createTestEngine, hookPayload, T0 } from '../testing/test-mnemo.js'
import { MnemoEngine } from './mnemo.js'

// Fact extraction during consolidation, against a fake OpenAI-compatible server on loopback.

afterEach(closeFakeChats)

const CWD = '/work/demo-app'
const PROJECT = { root: CWD, name: 'demo-app' }

const TRIPS = {
  name: 'trips',
  fields: [
    { name: 'destination', type: 'string' },
    { name: 'date', type: 'date' },
    { name: 'cost_usd', type: 'money' },
    { name: 'airline', type: 'string' },
  ],
  identity: ['destination', 'date'],
  timeField: 'date',
}

function llmEngine(baseUrl: string) {
  const clock = createManualClock(T0)
  const store = openSqliteStore({ path: ':memory:' }, () => clock.now())
  const engine = new MnemoEngine({
    store,
    clock,
    cwd: CWD,
    contextBudgetTokens: 2000,
    timeZone: 'UTC',
    consolidator: createLlmConsolidator(llmAt(baseUrl)),
  })
  return { engine, clock }
}

/** Plays a session of prompts through the hooks (one event a second); `end` closes it. */
async function play(
  t: { engine: MnemoEngine; clock: { advance(ms: number): void } },
  id: string,
  prompts: string[],
  end = true,
): Promise<void> {
  const hook = async (event: string, fields: Record<string, unknown>) => {
    await t.engine.captureHook(event, hookPayload(event, fields, id, CWD))
    t.clock.advance(1000)
  }
  await hook('SessionStart', { source: 'startup' })
  for (const prompt of prompts) await hook('UserPromptSubmit', { prompt })
  await hook('Stop', { last_assistant_message: 'Noted.' })
  if (end) await hook('SessionEnd', { reason: 'exit' })
}

/** The played session (not mnemo's own) and its observations. */
async function played(engine: MnemoEngine) {
  const session = (await engine.sessions({ limit: 10 })).find((s) => s.agent !== 'mnemo')!
  return { session, observations: (await engine.sessionTimeline(session.id, 0, 100)).observations }
}

/** The ref the extraction request gave the conversation line holding `text`. */
function refOf(body: ChatRequest, text: string): string {
  for (const line of body.messages[1]!.content.split('\n')) {
    if (!line.startsWith('{"ref"')) continue
    const o = JSON.parse(line) as { ref: string; text: string }
    if (o.text.includes(text)) return o.ref
  }
  throw new Error(`no line holds ${text}`)
}

type Answer = (body: ChatRequest) => unknown

/** Answers consolidation with a plain summary, and fact extraction with `facts(body)`. */
function chat(facts: Answer) {
  return (body: ChatRequest, res: ServerResponse) => {
    if (body.response_format.json_schema?.name === 'fact_records') reply(res, facts(body))
    else reply(res, { summary: 'The user talked about travel.', summarySources: ['o1'], memories: [] })
  }
}

const fields = (values: Record<string, unknown>) => Object.entries(values).map(([name, value]) => ({ name, value }))
const TOKYO = 'I flew to Tokyo on 2025-06-10 with ANA, it cost $850.'
const PARIS = 'Next month I fly to Paris on 2025-07-20, the ticket was $420.'

function tokyo(body: ChatRequest) {
  return {
    collection: 'trips',
    source: refOf(body, 'Tokyo'),
    quote: 'I flew to Tokyo on 2025-06-10',
    status: 'done',
    fields: fields({ destination: 'Tokyo', date: '2025-06-10', cost_usd: 850, airline: 'ANA' }),
  }
}

describe('fact extraction in consolidation, with a model', () => {
  it('writes a checked record with provenance to its observation, and nothing twice when run again', async () => {
    const { baseUrl, seen } = await fakeChat(chat((body) => ({ new_collections: [], records: [tokyo(body)] })))
    const t = llmEngine(baseUrl)
    await t.engine.facts.declare(TRIPS, { project: PROJECT })
    await play(t, 's1', [TOKYO, 'Also, please fix the failing test in src/app.ts.'])
    const r = await t.engine.consolidate()
    expect(r.facts).toEqual({ created: 1, updated: 0, unchanged: 0, skipped: 0, rejected: 0, problems: [] })
    expect(r.errors).toEqual([])
    const asked = seen.find((b) => b.response_format.json_schema?.name === 'fact_records')!
    expect(asked.messages[0]!.content).toMatch(/untrusted data/)
    expect(asked.messages[0]!.content).toContain('Today is 2025-06-14.')
    expect(asked.messages[1]!.content).toContain('"name":"trips"')
    expect(asked.messages[1]!.content).toContain('"cost_usd":"money (USD)"')
    const answer = await t.engine.facts.query('from trips list destination, cost_usd', { project: PROJECT })
    expect(answer.value).toEqual([{ id: answer.records[0], destination: 'Tokyo', cost_usd: 850 }])
    const shown = await t.engine.facts.show(answer.records[0]!, { project: PROJECT })
    const { session, observations } = await played(t.engine)
    expect('record' in shown && shown.record.provenance).toEqual({
      source: 'extraction',
      observation: observations.find((o) => o.text === TOKYO)!.id,
      session: session.id,
      quote: 'I flew to Tokyo on 2025-06-10',
      model: 'test-chat',
    })
    // The same session again: its summary is current, so nothing is asked or written.
    const asks = seen.length
    expect((await t.engine.consolidate()).facts.created).toBe(0)
    expect(seen.length).toBe(asks)
    // Resumed: the model proposes the old record again beside a new one; only the new one is written.
    await play(t, 's1', ['One more thing: that Tokyo trip was great.'])
    const r2 = await t.engine.consolidate()
    expect(seen.filter((b) => b.response_format.json_schema?.name === 'fact_records')).toHaveLength(2)
    expect(r2.facts).toMatchObject({ created: 0, skipped: 1 })
    expect((await t.engine.facts.query('from trips count', { project: PROJECT })).value).toBe(1)
  })

  it('refuses a wrong type, an unknown source, an unknown field and an identity clash, and writes the rest', async () => {
    const answer = (body: ChatRequest) => ({
      new_collections: [],
      records: [
        tokyo(body),
        { ...tokyo(body), fields: fields({ destination: 'Osaka', date: '2025-06-12', cost_usd: 'eight hundred' }) },
        { ...tokyo(body), source: 'o99', fields: fields({ destination: 'Kyoto', date: '2025-06-13' }) },
        { ...tokyo(body), fields: fields({ destination: 'Nara', date: '2025-06-14', seat: '12A' }) },
        { ...tokyo(body), source: refOf(body, 'Paris'), fields: fields({ destination: 'Paris', date: '2025-07-20', cost_usd: 420 }) },
        { ...tokyo(body), source: refOf(body, 'Paris'), fields: fields({ destination: 'Paris', date: '2025-07-20', cost_usd: 480 }) },
        { ...tokyo(body), fields: fields({ destination: 'Sapporo', cost_usd: 300 }) },
      ],
    })
    const { baseUrl } = await fakeChat(chat(answer))
    const t = llmEngine(baseUrl)
    await t.engine.facts.declare(TRIPS, { project: PROJECT })
    await play(t, 's1', [TOKYO, PARIS])
    const r = await t.engine.consolidate()
    expect(r.facts).toEqual({ created: 1, updated: 0, unchanged: 0, skipped: 0, rejected: 6, problems: expect.any(Array) })
    const session = (await played(t.engine)).session.id
    expect(r.facts.problems).toEqual([
      `${session}: fact proposal 3 (trips): it cites "o99", which is not an observation of this session sent to the model`,
      `${session}: fact proposal 2 (trips): fact proposal 2.cost_usd must be money (USD) (got "eight hundred")`,
      expect.stringMatching(new RegExp(`^${session}: fact proposal 4 \\(trips\\): fact proposal 4: field seat is not a field of trips`)),
      `${session}: fact proposal 7 (trips): it lacks the identity field date of trips`,
      expect.stringMatching(new RegExp(`^${session}: fact proposal 5 \\(trips\\): identity clash: proposals 5, 6 give trips`)),
      expect.stringMatching(new RegExp(`^${session}: fact proposal 6 \\(trips\\): identity clash: proposals 5, 6 give trips`)),
    ])
    expect((await t.engine.facts.query('from trips list destination', { project: PROJECT })).value).toMatchObject([
      { destination: 'Tokyo' },
    ])
  })

  it('declares a new collection the model names, with its identity and inferred types', async () => {
    const answer = (body: ChatRequest) => ({
      new_collections: [{ name: 'purchases', description: 'Things bought.', identity: ['item', 'date'] }],
      records: [
        {
          collection: 'purchases',
          source: refOf(body, 'keyboard'),
          quote: 'bought a keyboard',
          status: 'done',
          fields: fields({ item: 'keyboard', date: '2025-06-13', price_usd: 129.5 }),
        },
      ],
    })
    const { baseUrl } = await fakeChat(chat(answer))
    const t = llmEngine(baseUrl)
    await play(t, 's1', ['Yesterday (2025-06-13) I bought a keyboard for $129.50.'])
    expect((await t.engine.consolidate()).facts.created).toBe(1)
    const spec = await t.engine.facts.collection('purchases', { project: PROJECT })
    expect(spec).toMatchObject({ name: 'purchases', description: 'Things bought.', identity: ['item', 'date'], timeField: 'date' })
    expect(spec!.fields.map((f) => `${f.name}:${f.type}`)).toEqual(['item:string', 'date:date', 'price_usd:money'])
  })

  it('keeps a proposed record’s own id as external_id, its identity, as facts add does', async () => {
    const answer = (body: ChatRequest) => ({
      new_collections: [],
      records: [
        {
          collection: 'orders',
          source: refOf(body, 'order'),
          quote: 'order A-17',
          status: 'done',
          fields: fields({ id: 'A-17', total_usd: 40 }),
        },
      ],
    })
    const { baseUrl } = await fakeChat(chat(answer))
    const t = llmEngine(baseUrl)
    await play(t, 's1', ['My order A-17 came to $40.'])
    expect((await t.engine.consolidate()).facts.created).toBe(1)
    const spec = await t.engine.facts.collection('orders', { project: PROJECT })
    expect(spec).toMatchObject({ identity: ['external_id'] })
    expect(spec!.fields.map((f) => f.name)).toEqual(['external_id', 'total_usd'])
  })

  it('writes a record of a collection without identity once, however often its session is consolidated', async () => {
    const answer = (body: ChatRequest) => ({
      new_collections: [{ name: 'workouts', description: 'Exercise sessions.', identity: [] }],
      records: [
        {
          collection: 'workouts',
          source: refOf(body, 'ran'),
          quote: 'ran 5 km',
          status: 'done',
          fields: fields({ kind: 'run', km: 5, date: '2025-06-13' }),
        },
      ],
    })
    const { baseUrl } = await fakeChat(chat(answer))
    const t = llmEngine(baseUrl)
    await play(t, 's1', ['I ran 5 km on 2025-06-13.'])
    expect((await t.engine.consolidate()).facts.created).toBe(1)
    expect((await t.engine.facts.collection('workouts', { project: PROJECT }))!.identity).toEqual([])
    await play(t, 's1', ['Thanks.'])
    expect((await t.engine.consolidate()).facts).toMatchObject({ created: 0, skipped: 1 })
    expect((await t.engine.facts.query('from workouts count', { project: PROJECT })).value).toBe(1)
  })

  it('writes nothing when the answer is not JSON, even after the corrective retry', async () => {
    const { baseUrl } = await fakeChat((body, res) => {
      if (body.response_format.json_schema?.name !== 'fact_records') {
        reply(res, { summary: 'The user talked about travel.', summarySources: ['o1'], memories: [] })
        return
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: '{"records": [ {"collection": "trips",' } }] }))
    })
    const t = llmEngine(baseUrl)
    await t.engine.facts.declare(TRIPS, { project: PROJECT })
    await play(t, 's1', [TOKYO])
    const r = await t.engine.consolidate()
    expect(r.summaries).toBe(1)
    expect(r.facts).toMatchObject({ created: 0, updated: 0, unchanged: 0, skipped: 0, rejected: 0 })
    expect(r.facts.problems).toEqual([expect.stringMatching(/: fact extraction failed: .*not valid JSON.*after one corrective retry/)])
    expect(r.errors).toEqual([])
    expect((await t.engine.facts.query('from trips count', { project: PROJECT })).value).toBe(0)
  })

  it('never brings back a record deleted at a person’s request', async () => {
    const { baseUrl } = await fakeChat(chat((body) => ({ new_collections: [], records: [tokyo(body)] })))
    const t = llmEngine(baseUrl)
    await t.engine.facts.declare(TRIPS, { project: PROJECT })
    await play(t, 's1', [TOKYO])
    await t.engine.consolidate()
    const [id] = (await t.engine.facts.query('from trips list', { project: PROJECT })).records
    await t.engine.facts.delete(id!, { project: PROJECT })
    await play(t, 's1', ['And the hotel was fine.'])
    expect((await t.engine.consolidate()).facts).toMatchObject({ created: 0, skipped: 1 })
    expect((await t.engine.facts.query('from trips count', { project: PROJECT })).value).toBe(0)
  })
})

describe('fact extraction without a model', () => {
  it('invents nothing', async () => {
    const t = createTestEngine({ cwd: CWD })
    await t.engine.facts.declare(TRIPS, { project: PROJECT })
    await play(t, 's1', [TOKYO, PARIS])
    const r = await t.engine.consolidate()
    expect(r.summaries).toBe(1)
    expect(r.facts).toEqual({ created: 0, updated: 0, unchanged: 0, skipped: 0, rejected: 0, problems: [] })
    const declared = (await t.engine.facts.schema({ project: PROJECT })).filter((c) => c.name !== 'sessions')
    expect(declared.map((c) => [c.name, c.records])).toEqual([['trips', 0]])
  })
})
