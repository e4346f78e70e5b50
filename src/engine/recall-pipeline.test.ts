import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import type { EventInput } from '../core/types.js'
import { createOpenAiEmbedder } from '../providers/openai-embedder.js'
import { createTestEngine, hookPayload, recallWith } from '../testing/test-mnemo.js'
import { RERANK_FEATURES } from '../retrieval/rerank.js'
import { boostNamedRoles, textPrior } from './recall-channels.js'
import { DEFAULT_RECALL_CONFIG } from './recall-pipeline.js'

/** A dialogue session as LoCoMo-style turns: each [speaker, text], one second apart from `startIso`. */
function dialogue(sessionKey: string, startIso: string, turns: [string, string][]): EventInput[] {
  const start = Date.parse(startIso)
  return turns.map(([speaker, text], index) => ({
    agent: 'locomo',
    format: 'locomo-turn',
    type: 'turn',
    sessionKey,
    project: { root: 'locomo:test', name: 'test' },
    ts: start + index * 1000,
    idemKey: `${sessionKey}:${index}`,
    payload: { speaker, dia_id: `${sessionKey}:${index}`, text, index },
    sessionStartedAt: start,
  }))
}

const servers: Server[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))))
})

describe('keyword channel with neighbour spreading', () => {
  it('brings in the reply to a matching question, and says so', async () => {
    const { engine } = createTestEngine()
    await engine.append(
      dialogue('s1', '2023-05-08T13:56:00Z', [
        ['Ann', 'How often do you go climbing these days?'],
        ['Ben', 'Three times a week, mostly at the gym downtown.'],
        ['Ann', 'Nice. I bought new shoes yesterday.'],
      ]),
    )
    const hits = await engine.recall('go climbing', { limit: 3 })
    // The reply shares no word with the query: it comes in as the answer to the matching question,
    // and outranks it (the question keeps its score for spreading, then is scaled down by questionFactor).
    expect(hits.map((h) => h.sourceRef).slice(0, 2)).toEqual(['s1:1', 's1:0'])
    expect(hits[0]).toMatchObject({ viaNeighbor: true, channels: { bm25: { rank: 1 } } })
    expect(hits[1]!.viaNeighbor).toBe(false)
  })

  it('ranks a turn that holds a time above one that only shares words when the question asks "when"', async () => {
    const { engine } = createTestEngine()
    await engine.append(
      dialogue('s1', '2023-05-08T13:56:00Z', [
        ['Ann', 'I adopted a cat.'],
        ['Ben', 'Nice.'],
        ['Ann', 'I adopted a cat in May.'],
      ]),
    )
    expect((await engine.recall('When did Ann adopt the cat?', { limit: 1 }))[0]!.sourceRef).toBe('s1:2')
    // Not a "when" question: the shorter turn with the same words stays first (BM25 length normalisation).
    expect((await engine.recall('Why did Ann adopt the cat?', { limit: 1 }))[0]!.sourceRef).toBe('s1:0')
  })

  it('ranks the answer above the question that asked for it when both match', async () => {
    const { engine } = createTestEngine()
    await engine.append(
      dialogue('s1', '2023-05-08T13:56:00Z', [
        ['Ann', 'Which games did you play at the picnic?'],
        ['Ben', 'We played games like charades at the picnic.'],
      ]),
    )
    expect((await engine.recall('games at the picnic', { limit: 2 })).map((h) => h.sourceRef)).toEqual(['s1:1', 's1:0'])
  })

  it('boosts turns by the speaker the query names', async () => {
    const { engine } = createTestEngine()
    await engine.append(
      dialogue('s1', '2023-05-08T13:56:00Z', [
        ['Ann', 'I adopted a cat named Pixel from the shelter.'],
        ['Ben', 'I adopted a cat named Nova from the shelter too.'],
      ]),
    )
    expect((await engine.recall('which cat did Ben adopt', { limit: 1 }))[0]!.sourceRef).toBe('s1:1')
    expect((await engine.recall('which cat did Ann adopt', { limit: 1 }))[0]!.sourceRef).toBe('s1:0')
  })

  it("ranks the named speaker's reply to the other speaker's matching question first (the boost applies after spreading)", async () => {
    const { engine } = createTestEngine()
    await engine.append(
      dialogue('s1', '2023-05-08T13:56:00Z', [
        ['Ann', 'Have you been painting lately? Painting portraits or painting landscapes?'],
        ['Ben', 'Yes, mostly sunsets over the lake.'],
        ['Ann', 'I finished painting a portrait of my grandmother.'],
        ['Ben', 'The weather was lovely all week.'],
      ]),
    )
    // Ben speaks most turns, so his name alone says little to BM25 (FTS5 floors the IDF of a term in over half the documents).
    await engine.append(
      dialogue(
        's2',
        '2023-05-09T13:56:00Z',
        ['Good morning!', 'Coffee first.', 'Then a long walk.', 'Back home now.', 'Off to bed.'].map((t): [string, string] => ['Ben', t]),
      ),
    )
    // Ben's reply shares no content word with the query; it ranks through Ann's question, and the boost for the named speaker must apply after spreading.
    const hits = await engine.recall('What has Ben been painting?', { limit: 2, channels: ['bm25'] })
    expect(hits[0]!.sourceRef).toBe('s1:1')
  })
})

describe('time', () => {
  const events = () => [
    ...dialogue('may', '2023-05-08T13:56:00Z', [['Ann', 'I went to a support group yesterday and it was powerful.']]),
    ...dialogue('june', '2023-06-16T10:00:00Z', [['Ann', 'Big news: I joined a gym last week!']]),
  ]

  it('finds a turn by the date its relative phrase means ("yesterday" on 8 May 2023 is 7 May 2023)', async () => {
    const { engine } = createTestEngine()
    await engine.append(events())
    const hits = await engine.recall('what happened on 7 May 2023', { limit: 1, channels: ['bm25'] })
    expect(hits[0]!.sourceRef).toBe('may:0')
  })

  it('ranks documents of a date the query names through the time channel', async () => {
    const { engine } = createTestEngine()
    await engine.append(events())
    const hits = await engine.recall('what news did Ann share on 16 June 2023?', { limit: 2 })
    expect(hits[0]).toMatchObject({ sourceRef: 'june:0', channels: { time: { rank: 1 } } })
    const noTime = await engine.recall('what news did Ann share on 16 June 2023?', { limit: 2, channels: ['bm25'] })
    expect(noTime[0]!.channels?.time).toBeUndefined()
  })
})

describe('graph channel', () => {
  it('reaches documents about an entity that shares documents with the query entity', async () => {
    const { engine } = createTestEngine({ recall: recallWith({ graph: 1 }) })
    await engine.remember('validateToken is defined in src/middleware/auth.ts', { project: { root: '/p/a', name: 'a' } })
    await engine.remember('src/middleware/auth.ts reads JWKS_URL at start-up', { project: { root: '/p/a', name: 'a' } })
    for (let i = 0; i < 60; i++)
      await engine.remember(`unrelated note number ${i} about the billing service`, { project: { root: '/p/a', name: 'a' } })
    const hits = await engine.recall('where is validateToken', { limit: 5 })
    const viaGraph = hits.filter((h) => h.channels?.graph)
    expect(viaGraph.map((h) => h.snippet)).toEqual([
      'validateToken is defined in src/middleware/auth.ts',
      'src/middleware/auth.ts reads JWKS_URL at start-up',
    ])
  })
})

describe('visibility inside every channel, before its cut', () => {
  it('the time channel finds the one document of the asked kind behind more candidates of other kinds', async () => {
    const { engine, clock } = createTestEngine({ recall: recallWith({}, { candidates: 5 }) })
    const turns: [string, string][] = Array.from({ length: 8 }, (_, i) => ['Ann', `turn number ${i} of a long day`])
    await engine.append(dialogue('june', '2023-06-16T09:00:00Z', turns))
    clock.set(Date.parse('2023-06-16T12:00:00Z'))
    const { memory } = await engine.remember('we moved the gym session to Fridays', {
      kind: 'decision',
      project: { root: 'locomo:test', name: 'test' },
    })
    const hits = await engine.recall('16 June 2023', { channels: ['time'], kinds: ['decision'] })
    expect(hits.map((h) => h.id)).toEqual([memory.id])
  })

  it('the builtin vector channel finds a current memory behind more archived ones that match better', async () => {
    const { engine } = createTestEngine({ recall: recallWith({ vector: 1 }, { candidates: 3 }) })
    const project = { root: '/p/v', name: 'v' }
    const topics = ['camping forest tent hike', 'database migration orders schema']
    for (let i = 0; i < 20; i++) await engine.remember(`${topics[i % 2]} note ${i}`, { project })
    const { memory: current } = await engine.remember(
      'canvas brush beside the camping tent in the forest, and the orders schema migration',
      { project },
    )
    for (let i = 0; i < 6; i++) {
      const { memory } = await engine.remember(`canvas brush number ${i}`, { project })
      await engine.setMemoryState(memory.id, 'archive')
    }
    const hits = await engine.recall('canvas brush', { channels: ['vector'], limit: 3 })
    expect(hits.map((h) => h.id)).toContain(current.id)
    const withArchived = await engine.recall('canvas brush', { channels: ['vector'], limit: 3, includeArchived: true })
    expect(withArchived.map((h) => h.id)).not.toContain(current.id)
  })
})

describe('compatibility forms (NFKC)', () => {
  it('a full-width query finds ASCII text and an ASCII query finds full-width text, also after rebuild', async () => {
    const { engine } = createTestEngine()
    const project = { root: '/p/a', name: 'a' }
    await engine.remember('the checkout flow retries the payment twice', { project })
    await engine.remember('ｐａｙｍｅｎｔ ｇａｔｅｗａｙ timeout is ３０ seconds', { project })
    for (let i = 0; i < 20; i++) await engine.remember(`unrelated note number ${i} about the billing service`, { project })
    const found = async (query: string): Promise<string[]> => (await engine.recall(query, { limit: 3 })).map((h) => h.snippet)
    expect(await found('ｃｈｅｃｋｏｕｔ')).toEqual(['the checkout flow retries the payment twice'])
    expect(await found('gateway')).toEqual(['ｐａｙｍｅｎｔ ｇａｔｅｗａｙ timeout is ３０ seconds'])
    await engine.rebuild()
    expect(await found('gateway')).toEqual(['ｐａｙｍｅｎｔ ｇａｔｅｗａｙ timeout is ３０ seconds'])
  })
})

describe('file entities', () => {
  const ROOT = '/tmp/tmp.wc3XzOVkQr'
  async function capture(
    engine: ReturnType<typeof createTestEngine>['engine'],
    clock: ReturnType<typeof createTestEngine>['clock'],
  ): Promise<void> {
    await engine.captureHook(
      'UserPromptSubmit',
      hookPayload('UserPromptSubmit', { prompt: 'fix the discount in src/Cart.ts: pct/100 is applied twice' }, 's1', ROOT),
    )
    clock.advance(1000)
    await engine.captureHook(
      'PostToolUse',
      hookPayload(
        'PostToolUse',
        {
          tool_name: 'Edit',
          tool_use_id: 'e1',
          tool_input: { file_path: `${ROOT}/src/Cart.ts`, old_string: 'x', new_string: 'y' },
          tool_response: {},
        },
        's1',
        ROOT,
      ),
    )
    clock.advance(1000)
    for (let i = 0; i < 40; i++)
      await engine.remember(`unrelated note number ${i} about the billing service`, { project: { root: ROOT, name: 'app' } })
  }

  it('are one entity per file, named relative to the project root with their case kept, and arithmetic is no file', async () => {
    const { engine, clock } = createTestEngine({ cwd: ROOT })
    await capture(engine, clock)
    const files = async () =>
      (
        await engine.entityGraph(
          (await engine.listProjects()).map((p) => p.id),
          undefined,
          50,
        )
      ).nodes
        .filter((n) => n.type === 'file')
        .map((n) => n.name)
    expect(await files()).toEqual(['src/Cart.ts'])
    await engine.rebuild()
    expect(await files()).toEqual(['src/Cart.ts'])
  })

  it('lead the graph channel from a path the query writes absolute or relative to the documents that touched the file', async () => {
    const { engine, clock } = createTestEngine({ cwd: ROOT, recall: recallWith({ bm25: 0, graph: 1 }) })
    await capture(engine, clock)
    for (const query of [`what changed in ${ROOT}/src/Cart.ts`, 'what changed in src/Cart.ts']) {
      const hits = await engine.recall(query, { channels: ['graph'] })
      expect(hits.map((h) => h.kind).sort(), query).toEqual(['prompt', 'tool'])
    }
  })
})

describe('identifiers', () => {
  it('a hit holding applyDiscount outranks hits holding only apply (apply_patch calls) or only discount for "apply discount"', async () => {
    const { engine, clock } = createTestEngine()
    for (let i = 0; i < 10; i++) {
      await engine.captureHook(
        'PostToolUse',
        hookPayload('PostToolUse', {
          tool_name: 'apply_patch',
          tool_use_id: `t${i}`,
          tool_input: { patch: `*** Update File: src/file${i}.ts\n+const x${i} = ${i}` },
          tool_response: { output: 'Done' },
        }),
      )
      clock.advance(1000)
    }
    for (let i = 0; i < 30; i++) await engine.remember(`note ${i}: the orders service logs each request with its latency`)
    const both = (
      await engine.remember(
        'The cart total is computed in src/cart.ts; applyDiscount takes the coupon code, looks it up in the promotions table, checks the expiry date and the minimum basket value, and returns the reduced total rounded to cents.',
      )
    ).memory
    await engine.remember('a discount of 10% is given to returning customers')
    const hits = await engine.recall('apply discount', { limit: 5 })
    expect(hits[0]?.id).toBe(both.id)
  })
})

describe('per-session cap', () => {
  it('keeps at most N hits of one session among the top results, then fills with the rest', async () => {
    const turns = Array.from({ length: 6 }, (_, i) => ['Ann', `deploy step ${i} of the release`] as [string, string])
    const { engine } = createTestEngine({ recall: recallWith({}, { maxPerSession: 2 }) })
    await engine.append([
      ...dialogue('a', '2023-05-08T10:00:00Z', turns),
      ...dialogue('b', '2023-05-09T10:00:00Z', [['Ben', 'the release deploy went fine']]),
    ])
    const hits = await engine.recall('deploy release', { limit: 3 })
    expect(hits.map((h) => h.sourceRef?.split(':')[0])).toContain('b')
  })
})

describe('vector channels', () => {
  it('builtin LSA channel: off by default, used when weighted, refitted by reindex, and forget removes vectors', async () => {
    const { engine, store } = createTestEngine({ recall: recallWith({ vector: 1 }) })
    const topics = ['painting sunset canvas brush', 'camping forest tent hike', 'database migration orders schema']
    for (let i = 0; i < 30; i++) await engine.remember(`${topics[i % 3]} note ${i}`, { project: { root: '/p/v', name: 'v' } })
    const hits = await engine.recall('canvas brush', { limit: 5 })
    expect(hits.some((h) => h.channels?.vector)).toBe(true)
    const r = await engine.reindex()
    expect(r).toEqual({ builtinProjects: 1, embedded: 0, space: undefined })
    const victim = hits[0]!
    await engine.forget(victim.id)
    const project = (await engine.listProjects())[0]!
    const space = (await store.getLsaModel(project.id))!.space
    const victimVectors: number[] = []
    for (const v of await store.vectors(space, { projectIds: [project.id] }))
      if (v.docKey < 0 && (await store.docs([v.docKey]))[0]?.id === victim.id) victimVectors.push(v.docKey)
    expect(victimVectors.length > 0).toBe(false)
  })

  it('embedding channel: reindex embeds every document through an OpenAI-compatible endpoint; an outage degrades to the other channels', async () => {
    let down = false
    const server = createServer((req, res) => {
      let body = ''
      req.on('data', (c) => (body += c))
      req.on('end', () => {
        if (down) {
          res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"model not loaded"}}')
          return
        }
        const input = (JSON.parse(body) as { input: string[] }).input
        // A toy embedding: [has "cat", has "dog", 1], normalised by the client.
        const data = input.map((t, index) => ({ index, embedding: [/cat|kitten/i.test(t) ? 1 : 0, /dog|puppy/i.test(t) ? 1 : 0, 0.1] }))
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }))
      })
    })
    servers.push(server)
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const { port } = server.address() as AddressInfo
    const embedder = createOpenAiEmbedder({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'toy', maxRetries: 0 })
    const { engine } = createTestEngine({ embedder })
    await engine.remember('we adopted a kitten last spring')
    await engine.remember('the puppy chewed the sofa')
    const r = await engine.reindex()
    expect(r).toMatchObject({ embedded: 2, space: 'openai:toy:3' })
    const hits = await engine.recall('cat', { limit: 2 })
    expect(hits[0]).toMatchObject({ snippet: 'we adopted a kitten last spring', channels: { embedding: { rank: 1 } } })
    expect(hits.warnings).toEqual([])
    down = true
    const degraded = await engine.recall('puppy', { limit: 2 })
    expect(degraded.map((h) => h.snippet)).toEqual(['the puppy chewed the sofa'])
    expect(degraded.warnings).toEqual([expect.stringContaining('embedding channel skipped')])
  })

  it('gives each of two recalls running at once on one engine its own warnings', async () => {
    const { engine } = createTestEngine()
    await engine.remember('the puppy chewed the sofa')
    // Both start before either ends: a warning kept on the engine would be the last one written, for both.
    const [asked, plain] = await Promise.all([engine.recall('puppy', { channels: ['bm25', 'vector'] }), engine.recall('puppy')])
    expect(asked.warnings).toEqual(['channel vector is off (weight 0; set it in MNEMO_RECALL_WEIGHTS)'])
    expect(plain.warnings).toEqual([])
    expect([asked.length, plain.length]).toEqual([1, 1])
  })
})

describe('textPrior', () => {
  const config = { answerTypeBoost: 2, questionFactor: 0.5 }
  it('boosts a text holding the asked-for type, scales down one ending with a question, and multiplies both', () => {
    expect(textPrior('we met in 2019', 'time', config)).toBe(2)
    expect(textPrior('we met at the park', 'time', config)).toBe(1)
    expect(textPrior('did we meet in 2019?', 'time', config)).toBe(1)
    expect(textPrior('where did we meet? [shares an image: a park]', undefined, config)).toBe(0.5)
    expect(textPrior('we met twice', 'number', config)).toBe(2)
  })

  it('leaves an unknown text and a question-free, untyped one as they are', () => {
    expect(textPrior(undefined, 'time', config)).toBe(1)
    expect(textPrior('we met in 2019', undefined, config)).toBe(1)
  })
})

describe('boostNamedRoles', () => {
  it('multiplies the scores of documents whose speaker the query names, case-insensitively, and leaves the rest', () => {
    const scores = new Map([
      [1, 1],
      [2, 2],
      [3, 1],
    ])
    boostNamedRoles(
      scores,
      new Map([
        [1, 'Melanie'],
        [2, 'Caroline'],
        [3, 'al'],
      ]),
      new Set(['what', 'did', 'melanie', 'al', 'paint']),
      3,
    )
    // 'al' is shorter than 3 characters: too ambiguous to count as a name.
    expect([...scores]).toEqual([
      [1, 3],
      [2, 2],
      [3, 1],
    ])
  })
})

describe('re-ranker', () => {
  const turns: [string, string][] = [
    ['Ann', 'Did you ever adopt a pet?'],
    ['Ben', 'Yes, I adopted a cat from the shelter last May, she is called Miso and sleeps all day.'],
    ['Ann', 'A cat! Lovely.'],
    ['Ben', 'Cats are easy.'],
  ]

  it('reorders the head by its features and keeps the scores falling down the list', async () => {
    const { engine } = createTestEngine()
    await engine.append(dialogue('s1', '2023-05-08T13:56:00Z', turns))
    const hits = await engine.recall('When did Ben adopt the cat?', { limit: 4 })
    expect(hits[0]?.sourceRef).toBe('s1:1')
    for (let i = 1; i < hits.length; i++) expect(hits[i]!.score).toBeLessThanOrEqual(hits[i - 1]!.score)
  })

  it('returns the same documents with and without it, and hands each head to the trace hook', async () => {
    const traced: number[][] = []
    const on = createTestEngine({
      recall: recallWith(
        {},
        { rerank: { ...DEFAULT_RECALL_CONFIG.rerank!, trace: (head) => traced.push(...head.map((h) => h.features)) } },
      ),
    })
    const off = createTestEngine({ recall: recallWith({}, { rerank: undefined }) })
    for (const { engine } of [on, off]) await engine.append(dialogue('s1', '2023-05-08T13:56:00Z', turns))
    const a = await on.engine.recall('adopt cat', { limit: 10 })
    const b = await off.engine.recall('adopt cat', { limit: 10 })
    expect(a.map((h) => h.id).sort()).toEqual(b.map((h) => h.id).sort())
    expect(traced.length).toBe(a.length)
    for (const f of traced) expect(f).toHaveLength(RERANK_FEATURES.length)
    // Explain says where each hit stood before the re-ranker moved it; without the re-ranker there is nothing to say.
    expect(a.map((h) => h.fusedRank).sort((x, y) => x! - y!)).toEqual(a.map((_, i) => i + 1))
    expect(b.every((h) => h.fusedRank === undefined)).toBe(true)
  })
})
