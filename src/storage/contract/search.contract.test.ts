import { expect, it } from 'vitest'
import type { ProjectId } from '../../core/ids.js'
import type { EventInput } from '../../core/types.js'
import type { Scope, Store } from '../store.js'
import {
  ALPHA,
  appendEvents,
  BETA,
  describeContract,
  editEvent,
  idsOf,
  MINUTE,
  memoryEvent,
  memoryId,
  observationId,
  promptEvent,
  T0,
} from './contract.js'

/**
 * A store where the reader's documents (project alpha, user alice, agent claude-code) are few and match weakly,
 * and every other scope holds many strong matches written earlier: another user's (bob), another agent's (codex),
 * another project's (beta). A channel that filtered by scope after cutting its list to `limit` would return
 * none or few of the reader's documents; one that filters inside its query returns exactly them.
 */
async function scopedWorld(store: Store) {
  const strong = 'billing billing billing ledger'
  const crowd: EventInput[] = []
  for (let i = 0; i < 8; i++) {
    const ts = T0 + i * MINUTE
    crowd.push(promptEvent(`bob-${i}`, strong, { user: 'bob', session: 'bob', ts }))
    crowd.push(promptEvent(`codex-${i}`, strong, { agent: 'codex', session: 'cx', ts }))
    crowd.push(promptEvent(`beta-${i}`, strong, { project: BETA, session: 'b', ts }))
    crowd.push(editEvent(`bob-edit-${i}`, 'src/billing.ts', 'see src/tax.ts', { user: 'bob', session: 'bob', ts }))
    crowd.push(editEvent(`codex-edit-${i}`, 'src/billing.ts', 'see src/tax.ts', { agent: 'codex', session: 'cx', ts }))
    crowd.push(editEvent(`beta-edit-${i}`, 'src/billing.ts', 'see src/tax.ts', { project: BETA, session: 'b', ts }))
  }
  const late = T0 + 60 * MINUTE
  const shared = promptEvent('shared', 'why does the nightly billing job retry twice', { ts: late })
  const alice = promptEvent('alice', 'billing invoices for alice are late', { user: 'alice', session: 'al', ts: late + MINUTE })
  const memory = memoryEvent('billing runs nightly at 02:00', { ts: late + 2 * MINUTE })
  const sharedEdit = editEvent('shared-edit', 'src/billing.ts', 'see src/ledger.ts', { ts: late + 3 * MINUTE })
  const aliceEdit = editEvent('alice-edit', 'src/billing.ts', 'see src/ledger.ts', { user: 'alice', session: 'al', ts: late + 4 * MINUTE })
  // Memories of another user, and one stated through another agent: out of the reader's scope too.
  const bobMemory = memoryEvent('billing billing billing for bob', { user: 'bob', ts: T0 })
  const codexMemory = memoryEvent('billing billing billing by codex', { memoryAgent: 'codex', ts: T0 })
  await appendEvents(store, [...crowd, bobMemory, codexMemory, shared, alice, memory, sharedEdit, aliceEdit])
  const alpha = (await store.listProjects()).find((p) => p.root === ALPHA.root)!.id
  const reader: Scope = { projectIds: [alpha], user: 'alice', agent: 'claude-code' }
  return {
    alpha,
    reader,
    late,
    ids: {
      shared: observationId(shared),
      alice: observationId(alice),
      memory: memoryId(memory),
      sharedEdit: observationId(sharedEdit),
      aliceEdit: observationId(aliceEdit),
      bobMemory: memoryId(bobMemory),
      codexMemory: memoryId(codexMemory),
    },
  }
}

const sorted = (ids: readonly string[]): string[] => [...ids].sort()

describeContract('scoped search', (t) => {
  it('keyword search applies project, user and agent scope inside the query, before the limit', async () => {
    const { store } = t()
    const { reader, ids, alpha } = await scopedWorld(store)
    // The edits match too: their text names src/billing.ts.
    const mine = [ids.shared, ids.alice, ids.memory, ids.sharedEdit, ids.aliceEdit]
    const hits = await store.searchText({ ...reader, match: '"billing"', limit: 10 })
    expect(
      sorted(
        await idsOf(
          store,
          hits.map((h) => h.docKey),
        ),
      ),
    ).toEqual(sorted(mine))
    // The limit cuts the reader's own documents only.
    const two = await store.searchText({ ...reader, match: '"billing"', limit: 2 })
    expect(two).toHaveLength(2)
    for (const id of await idsOf(
      store,
      two.map((h) => h.docKey),
    ))
      expect(mine).toContain(id)
    expect(await store.matchCount({ ...reader, match: '"billing"', limit: 100 })).toBe(5)
    // Each condition on its own: user alone (with codex's 16 and its memory), agent alone (with bob's 16 and his
    // memory), shared rows only, every row.
    expect(await store.matchCount({ projectIds: [alpha], user: 'alice', match: '"billing"', limit: 100 })).toBe(5 + 16 + 1)
    expect(await store.matchCount({ projectIds: [alpha], agent: 'claude-code', match: '"billing"', limit: 100 })).toBe(5 + 16 + 1)
    expect(await store.matchCount({ projectIds: [alpha], user: null, match: '"billing"', limit: 100 })).toBe(3 + 16 + 1)
    expect(await store.matchCount({ match: '"billing"', limit: 100 })).toBe(55)
    // A count of `limit` means at least that many.
    expect(await store.matchCount({ match: '"billing"', limit: 10 })).toBe(10)
  })

  it('keyword search ranks the reader’s documents by relevance and names each one’s role', async () => {
    const { store } = t()
    const { reader, ids } = await scopedWorld(store)
    const roles = await store.searchText({ ...reader, match: '"alice"', limit: 5 })
    expect(
      await idsOf(
        store,
        roles.map((h) => h.docKey),
      ),
    ).toEqual([ids.alice])
    expect(roles[0]!.role).toBe('user')
    const memory = await store.searchText({ ...reader, match: '"nightly"', limit: 5 })
    expect(
      sorted(
        await idsOf(
          store,
          memory.map((h) => h.docKey),
        ),
      ),
    ).toEqual(sorted([ids.shared, ids.memory]))
    expect(memory.find((h) => h.role === 'fact')).toBeDefined()
    for (const h of memory) expect(h.score).toBeGreaterThan(0)
  })

  it('keyword search keeps only the kinds asked for, inside the query, before the limit', async () => {
    const { store } = t()
    // Twelve prompts that match strongly, then a decision and a fact that match weakly: cut to 3 first and filtered
    // after, a kind filter would find nothing.
    const crowd = Array.from({ length: 12 }, (_, i) => promptEvent(`p-${i}`, 'deploy deploy deploy the api', { ts: T0 + i }))
    const decision = memoryEvent('we deploy on Tuesdays after the release notes are written and reviewed by two people', {
      kind: 'decision',
      ts: T0 + 20 * MINUTE,
    })
    const fact = memoryEvent('the deploy key rotates every quarter and is kept in the team vault with the other secrets', {
      ts: T0 + 21 * MINUTE,
    })
    await appendEvents(store, [...crowd, decision, fact])
    const only = async (kinds: string[], limit: number) =>
      idsOf(
        store,
        (await store.searchText({ match: '"deploy"', limit, kinds })).map((h) => h.docKey),
      )
    expect(await only(['decision'], 3)).toEqual([memoryId(decision)])
    expect(sorted(await only(['decision', 'fact'], 3))).toEqual(sorted([memoryId(decision), memoryId(fact)]))
    const prompts = await only(['prompt'], 20)
    expect(prompts).toHaveLength(12)
    for (const id of prompts) expect(id.startsWith('obs')).toBe(true)
    // No kinds, or an empty list: every kind.
    expect(await only([], 20)).toHaveLength(14)
  })

  it('keyword search puts the document that matches more of the query, more often, first', async () => {
    const { store } = t()
    const strong = promptEvent('strong', 'flaky checkout test: the checkout test is flaky', { ts: T0 })
    const weak = promptEvent('weak', 'the release notes mention a checkout change among many other unrelated things today', { ts: T0 + 1 })
    const none = promptEvent('none', 'nothing about it here', { ts: T0 + 2 })
    await appendEvents(store, [weak, none, strong])
    const hits = await store.searchText({ match: '"checkout" OR "flaky"', limit: 10 })
    expect(
      await idsOf(
        store,
        hits.map((h) => h.docKey),
      ),
    ).toEqual([observationId(strong), observationId(weak)])
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score)
    // A phrase matches its words in order only.
    const phrase = await store.searchText({ match: '"checkout test"', limit: 10 })
    expect(
      await idsOf(
        store,
        phrase.map((h) => h.docKey),
      ),
    ).toEqual([observationId(strong)])
  })

  it('keyword search within one session, and prefix phrases', async () => {
    const { store } = t()
    const { reader, ids } = await scopedWorld(store)
    const alice = (await store.getObservation(ids.alice))!
    const inSession = await store.searchText({ ...reader, sessionId: alice.sessionId, match: '"billing"', limit: 10 })
    expect(
      sorted(
        await idsOf(
          store,
          inSession.map((h) => h.docKey),
        ),
      ),
    ).toEqual(sorted([ids.alice, ids.aliceEdit]))
    const prefix = await store.searchText({ ...reader, match: '"invoi"*', limit: 10 })
    expect(
      await idsOf(
        store,
        prefix.map((h) => h.docKey),
      ),
    ).toEqual([ids.alice])
  })

  it('counts the documents of a scope', async () => {
    const { store } = t()
    const { reader, alpha } = await scopedWorld(store)
    expect(await store.countDocs(reader)).toBe(5)
    expect(await store.countDocs({ projectIds: [alpha], user: null })).toBe(3 + 16 + 1)
    expect(await store.countDocs({})).toBe(48 + 2 + 5)
  })

  it('the time channel returns the scope’s documents in a time range, oldest or newest first, before the limit', async () => {
    const { store } = t()
    const { reader, ids, late } = await scopedWorld(store)
    const range = { ...reader, from: T0, to: late + 10 * MINUTE }
    const all = await store.docsInTimeRange({ ...range, limit: 10 })
    expect(sorted(await idsOf(store, all))).toEqual(sorted([ids.shared, ids.alice, ids.memory, ids.sharedEdit, ids.aliceEdit]))
    const oldest = await store.docsInTimeRange({ ...range, limit: 2 })
    expect(await idsOf(store, oldest)).toEqual([ids.shared, ids.alice])
    const newest = await store.docsInTimeRange({ ...range, limit: 2, newestFirst: true })
    expect(await idsOf(store, newest)).toEqual([ids.aliceEdit, ids.sharedEdit])
    // [from, to): a document at `to` is out, one at `from` in.
    expect(await idsOf(store, await store.docsInTimeRange({ ...reader, from: late + MINUTE, to: late + 3 * MINUTE, limit: 10 }))).toEqual([
      ids.alice,
      ids.memory,
    ])
  })

  it('reads documents by key in the order asked, leaving unknown keys out', async () => {
    const { store } = t()
    const { reader, ids } = await scopedWorld(store)
    const keys = await store.docsInTimeRange({ ...reader, from: T0, to: T0 + 1000 * MINUTE, limit: 10 })
    const reversed = [...keys].reverse()
    const docs = await store.docs([...reversed, 987_654_321])
    expect(sorted(docs.map((d) => d.id))).toEqual(sorted([ids.aliceEdit, ids.sharedEdit, ids.memory, ids.alice, ids.shared]))
    expect(docs.map((d) => d.docKey)).toEqual(reversed)
    const memory = docs.find((d) => d.id === ids.memory)!
    expect(memory).toMatchObject({
      type: 'memory',
      kind: 'fact',
      role: 'fact',
      text: 'billing runs nightly at 02:00',
      sessionId: undefined,
    })
    const alice = docs.find((d) => d.id === ids.alice)!
    expect(alice).toMatchObject({ type: 'observation', kind: 'prompt', role: 'user', text: 'billing invoices for alice are late' })
  })

  it('reads the roles of documents by key as docs gives them, leaving unknown keys out', async () => {
    const { store } = t()
    const { reader } = await scopedWorld(store)
    const keys = await store.docsInTimeRange({ ...reader, from: T0, to: T0 + 1000 * MINUTE, limit: 10 })
    const roles = await store.docRoles([...keys, 987_654_321, -987_654_321])
    expect(keys.some((k) => k < 0) && keys.some((k) => k > 0)).toBe(true)
    expect(roles).toEqual(new Map((await store.docs(keys)).map((d) => [d.docKey, d.role])))
    expect(await store.docRoles([])).toEqual(new Map())
  })

  it('finds the neighbours of observations in their session, nearest first', async () => {
    const { store } = t()
    const events = [0, 1, 2, 3, 4].map((i) => promptEvent(`n${i}`, `step ${i}`, { ts: T0 + i * MINUTE }))
    await appendEvents(store, [...events, promptEvent('other', 'another session', { session: 's2', ts: T0 + 2 * MINUTE })])
    const keys = await store.docsInTimeRange({
      from: T0,
      to: T0 + 10 * MINUTE,
      limit: 10,
      sessionId: (await store.getObservation(observationId(events[0]!)))!.sessionId,
    })
    expect(await idsOf(store, keys)).toEqual(events.map((e) => observationId(e)))
    const [middle] = await store.docs([keys[2]!])
    const around = await store.neighbors([{ docKey: middle!.docKey, sessionId: middle!.sessionId, ts: middle!.ts }], 2)
    const n = around.get(middle!.docKey)!
    expect(await idsOf(store, n.prev)).toEqual([observationId(events[1]!), observationId(events[0]!)])
    expect(await idsOf(store, n.next)).toEqual([observationId(events[3]!), observationId(events[4]!)])
  })
})

describeContract('scoped graph and vectors', (t) => {
  const file = (name: string) => ({ type: 'file' as const, name })

  it('counts an entity’s documents within the scope and walks its mentions inside the scope, before the limit', async () => {
    const { store } = t()
    const { reader, ids } = await scopedWorld(store)
    const [billing, ...rest] = await store.findEntities(reader, [file('src/billing.ts')])
    expect(rest).toEqual([])
    expect(billing).toMatchObject({ type: 'file', name: 'src/billing.ts', docs: 2 })
    // Without a user or agent: every alpha document that mentions it (shared, alice, 8 of bob, 8 of codex).
    const all = await store.findEntities({ projectIds: reader.projectIds! }, [file('src/billing.ts')])
    expect(all.map((e) => [e.id, e.docs])).toEqual([[billing!.id, 18]])
    // `maxDocs`: a count over it is reported as maxDocs + 1.
    expect((await store.findEntities({ projectIds: reader.projectIds! }, [file('src/billing.ts')], 5))[0]!.docs).toBe(6)
    // An entity none of the reader's documents mentions is left out.
    expect(await store.findEntities(reader, [file('src/tax.ts')])).toEqual([])
    const mentions = await store.entityMentions([billing!.id], reader, 10)
    expect(
      sorted(
        await idsOf(
          store,
          mentions.map((m) => m.docKey),
        ),
      ),
    ).toEqual(sorted([ids.sharedEdit, ids.aliceEdit]))
    expect(mentions.every((m) => m.entityId === billing!.id)).toBe(true)
    // The limit cuts the reader's mentions only (bob's and codex's 16 came first in the log).
    const one = await store.entityMentions([billing!.id], reader, 1)
    expect(one).toHaveLength(1)
    expect([ids.sharedEdit, ids.aliceEdit]).toContain((await idsOf(store, [one[0]!.docKey]))[0])
  })

  it('co-mentions, entity search and the viewer’s sample stay in the scope', async () => {
    const { store } = t()
    const { reader, ids } = await scopedWorld(store)
    const scope = { ...reader, projectIds: reader.projectIds! }
    const [billing] = await store.findEntities(reader, [file('src/billing.ts')])
    const [ledger] = await store.findEntities(reader, [file('src/ledger.ts')])
    expect(ledger).toMatchObject({ name: 'src/ledger.ts', docs: 2 })
    const [edit] = await store.findEntities(reader, [{ type: 'tool', name: 'edit' }])
    expect(edit).toMatchObject({ docs: 2 })
    // Out of scope src/tax.ts shares 16 documents with src/billing.ts; in it, only src/ledger.ts and the Edit tool share any.
    const co = await store.coMentioned([billing!.id], reader, 5)
    expect(co.sort((a, b) => a.id - b.id)).toEqual(
      [
        { id: ledger!.id, shared: 2, docs: 2 },
        { id: edit!.id, shared: 2, docs: 2 },
      ].sort((a, b) => a.id - b.id),
    )
    expect(await store.coMentioned([billing!.id], reader, 1)).toHaveLength(1)
    const found = await store.searchEntities(scope, 'src/', 10)
    expect(found.map((e) => e.name).sort()).toEqual(['src/billing.ts', 'src/ledger.ts'])
    expect(sorted(await idsOf(store, await store.sampleDocs(scope, billing!.id, 10)))).toEqual(sorted([ids.sharedEdit, ids.aliceEdit]))
    const inDocs = await store.entitiesInDocs(await store.sampleDocs(scope, billing!.id, 10), 10)
    expect(inDocs.filter((e) => e.id === billing!.id || e.id === ledger!.id).map((e) => e.shared)).toEqual([2, 2])
    const keys = await store.sampleDocs(scope, billing!.id, 10)
    expect(await store.entityEdges([billing!.id, ledger!.id], keys)).toEqual([
      billing!.id < ledger!.id
        ? { source: billing!.id, target: ledger!.id, weight: 2 }
        : { source: ledger!.id, target: billing!.id, weight: 2 },
    ])
    expect((await store.entitiesById([billing!.id, 987_654_321])).map((e) => e.name)).toEqual(['src/billing.ts'])
  })

  it('returns the vectors of the scope’s documents only, and the documents of a space without one', async () => {
    const { store } = t()
    const { reader, ids } = await scopedWorld(store)
    const missing = await store.docsWithoutVector('space-a', {}, 1000)
    expect(missing).toHaveLength(55)
    const vec = (key: number) => new Float32Array([key, 0.5, -1])
    await store.putVectors(
      'space-a',
      missing.map((d) => ({ docKey: d.docKey, vec: vec(d.docKey) })),
    )
    expect(await store.docsWithoutVector('space-a', {}, 1000)).toEqual([])
    const mine = await store.vectors('space-a', reader)
    expect(
      sorted(
        await idsOf(
          store,
          mine.map((v) => v.docKey),
        ),
      ),
    ).toEqual(sorted([ids.shared, ids.alice, ids.memory, ids.sharedEdit, ids.aliceEdit]))
    for (const v of mine) expect([...v.vec]).toEqual([...vec(v.docKey)])
    // Another space is separate; dropping one leaves the other.
    const readerMissing = await store.docsWithoutVector('space-b', reader, 1000)
    expect(
      sorted(
        await idsOf(
          store,
          readerMissing.map((d) => d.docKey),
        ),
      ),
    ).toEqual(
      sorted(
        await idsOf(
          store,
          mine.map((v) => v.docKey),
        ),
      ),
    )
    expect(readerMissing.find((d) => d.docKey === mine[0]!.docKey)?.text).toEqual((await store.docs([mine[0]!.docKey]))[0]!.text)
    // The limit cuts the reader's documents only (every other scope's came first in the log).
    const firstTwo = await store.docsWithoutVector('space-b', reader, 2)
    expect(firstTwo).toHaveLength(2)
    for (const id of await idsOf(
      store,
      firstTwo.map((d) => d.docKey),
    ))
      expect([ids.shared, ids.alice, ids.memory, ids.sharedEdit, ids.aliceEdit]).toContain(id)
    await store.putVectors('space-b', [{ docKey: mine[0]!.docKey, vec: new Float32Array([1, 2]) }])
    await store.dropSpace('space-a')
    expect(await store.vectors('space-a', {})).toEqual([])
    expect((await store.vectors('space-b', {})).map((v) => [...v.vec])).toEqual([[1, 2]])
    // Replacing a vector keeps one per document and space.
    await store.putVectors('space-b', [{ docKey: mine[0]!.docKey, vec: new Float32Array([3, 4]) }])
    expect((await store.vectors('space-b', {})).map((v) => [...v.vec])).toEqual([[3, 4]])
  })

  it('stores a project’s builtin model and its texts', async () => {
    const { store } = t()
    const { alpha } = await scopedWorld(store)
    expect(await store.getLsaModel(alpha)).toBeUndefined()
    const model = new Uint8Array([0, 1, 2, 253, 254, 255])
    await store.putLsaModel(alpha, { space: 'lsa:1', docCount: 20, builtAt: T0, model })
    expect(await store.getLsaModel(alpha)).toEqual({ space: 'lsa:1', docCount: 20, builtAt: T0, model })
    expect(await store.lsaModelInfo(alpha)).toEqual({ space: 'lsa:1', docCount: 20, builtAt: T0 })
    await store.putLsaModel(alpha, { space: 'lsa:2', docCount: 21, builtAt: T0 + 1, model: new Uint8Array([9]) })
    expect(await store.lsaModelInfo(alpha)).toEqual({ space: 'lsa:2', docCount: 21, builtAt: T0 + 1 })
    expect(await store.projectTexts(alpha, 3)).toHaveLength(3)
    expect(await store.projectTexts('prj_unknown' as ProjectId, 3)).toEqual([])
  })
})
