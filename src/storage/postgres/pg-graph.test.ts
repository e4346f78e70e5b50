import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ProjectId, SessionId } from '../../core/ids.js'
import { whyNoPostgres, withPostgres } from '../../testing/postgres.js'
import type { PgDb } from './pg-db.js'
import {
  coMentioned,
  entitiesById,
  entitiesInDocs,
  entityEdges,
  entityMentions,
  entityNames,
  findEntities,
  sampleDocs,
  searchEntities,
} from './pg-graph.js'
import { openSearchDb, putDocs } from '../../testing/pg-search-fixtures.js'
import { docsWithoutVector, dropSpace, getLsaModel, lsaModelInfo, projectTexts, putLsaModel, putVectors, vectors } from './pg-vectors.js'

const pg = await withPostgres()
const P1 = 'p1' as ProjectId
const P2 = 'p2' as ProjectId

describe.skipIf(!pg)(`PostgreSQL graph and vector channels${pg ? '' : ` (skipped: ${whyNoPostgres()})`}`, () => {
  let db: PgDb
  let k: number[]
  const ent = new Map<string, number>()
  beforeAll(async () => {
    db = await openSearchDb(pg!.url)
    k = await putDocs(db, [
      /* 0 */ { text: 'Caroline met Melanie about auth.ts', session: 's1', ts: 10 },
      /* 1 */ { text: 'Caroline fixed auth.ts', session: 's1', ts: 20, user: 'ann' },
      /* 2 */ { text: 'Melanie and Caroline again', session: 's2', ts: 30, user: 'bob' },
      /* 3 */ { type: 'memory', text: 'Caroline owns auth.ts', ts: 40, agent: null },
      /* 4 */ { text: 'Caroline in another project', project: 'p2', ts: 50 },
    ])
    await db.transaction('fixture', async (c) => {
      for (const [project, type, name] of [
        ['p1', 'name', 'caroline'],
        ['p1', 'name', 'melanie'],
        ['p1', 'file', 'auth.ts'],
        ['p2', 'name', 'caroline'],
        ['p1', 'name', 'nobody'],
      ] as const) {
        const r = await c.query<{ id: number }>('INSERT INTO entities (project_id, type, name) VALUES ($1, $2, $3) RETURNING id', [
          project,
          type,
          name,
        ])
        ent.set(`${project}:${name}`, Number(r.rows[0]?.id))
      }
      const mention = (e: string, doc: number | undefined) =>
        c.query('INSERT INTO entity_mentions (entity_id, doc_key) VALUES ($1, $2)', [ent.get(e), doc])
      for (const doc of [k[0], k[1], k[2], k[3]]) await mention('p1:caroline', doc)
      for (const doc of [k[0], k[2]]) await mention('p1:melanie', doc)
      for (const doc of [k[0], k[1], k[3]]) await mention('p1:auth.ts', doc)
      await mention('p2:caroline', k[4])
    })
  })
  afterAll(async () => {
    await db?.close()
    await pg?.drop()
  })
  const id = (key: string): number => ent.get(key) ?? -1

  it('names, finds and counts entities within the scope', async () => {
    expect((await entityNames(db, [P1])).sort()).toEqual(['caroline', 'melanie', 'nobody'])
    // Distinct names: Caroline of both projects is one name.
    expect((await entityNames(db, [])).sort()).toEqual(['caroline', 'melanie', 'nobody'])
    const refs = [
      { type: 'name', name: 'caroline' },
      { type: 'name', name: 'nobody' },
      { type: 'file', name: 'auth.ts' },
    ] as const
    expect(await findEntities(db, { projectIds: [P1] }, refs)).toEqual([
      { id: id('p1:caroline'), type: 'name', name: 'caroline', docs: 4 },
      { id: id('p1:auth.ts'), type: 'file', name: 'auth.ts', docs: 3 },
    ])
    // Ann sees her document and the shared ones, not Bob's; every project when none is named; a cap stops counting.
    expect((await findEntities(db, { projectIds: [P1], user: 'ann' }, refs)).map((e) => e.docs)).toEqual([3, 3])
    expect((await findEntities(db, { user: null }, refs.slice(0, 1))).map((e) => [e.id, e.docs])).toEqual([
      [id('p1:caroline'), 2],
      [id('p2:caroline'), 1],
    ])
    expect((await findEntities(db, { projectIds: [P1] }, refs, 1)).map((e) => e.docs)).toEqual([2, 2])
  })

  it('walks mentions and co-mentions inside the scope', async () => {
    const caroline = id('p1:caroline')
    expect(await entityMentions(db, [caroline], { projectIds: [P1] }, 10)).toEqual(
      [k[3], k[0], k[1], k[2]].map((docKey) => ({ entityId: caroline, docKey })),
    )
    expect((await entityMentions(db, [caroline], { user: 'bob' }, 10)).map((m) => m.docKey)).toEqual([k[3], k[0], k[2]])
    expect((await entityMentions(db, [caroline], { sessionId: 's2' as SessionId }, 10)).map((m) => m.docKey)).toEqual([k[2]])
    expect(await coMentioned(db, [caroline], { projectIds: [P1] }, 10)).toEqual([
      { id: id('p1:auth.ts'), shared: 3, docs: 3 },
      { id: id('p1:melanie'), shared: 2, docs: 2 },
    ])
    expect(await coMentioned(db, [caroline], { user: null }, 10, 1)).toEqual([
      { id: id('p1:auth.ts'), shared: 2, docs: 2 },
      { id: id('p1:melanie'), shared: 1, docs: 1 },
    ])
  })

  it('serves the viewer graph: entity search, samples, entities of documents and their edges', async () => {
    expect((await searchEntities(db, { projectIds: [P1] }, ' CARO', 10)).map((e) => [e.name, e.docs])).toEqual([['caroline', 4]])
    expect((await searchEntities(db, { projectIds: [P1] }, 'e', 10)).map((e) => e.name)).toEqual(['caroline', 'melanie'])
    expect(await searchEntities(db, { projectIds: [P1], user: null }, 'nobody', 10)).toEqual([])
    expect(await searchEntities(db, { projectIds: [P1] }, '%', 10)).toEqual([])
    expect(await sampleDocs(db, { projectIds: [P1] }, id('p1:caroline'), 3)).toEqual([k[2], k[1], k[0]])
    expect(await sampleDocs(db, { projectIds: [P1] }, id('p1:caroline'), 10)).toEqual([k[2], k[1], k[0], k[3]])
    expect(await sampleDocs(db, { projectIds: [P1], user: 'ann' }, id('p1:caroline'), 10)).toEqual([k[1], k[0], k[3]])
    expect(await sampleDocs(db, { projectIds: [P1] }, undefined, 2)).toEqual([k[2], k[1]])
    const docKeys = [k[0], k[1], k[2], k[3]] as number[]
    expect(await entitiesInDocs(db, docKeys, 2)).toEqual([
      { id: id('p1:caroline'), shared: 4 },
      { id: id('p1:auth.ts'), shared: 3 },
    ])
    expect((await entitiesById(db, [id('p1:melanie'), 999_999, id('p2:caroline')])).map((e) => [e.name, e.docs])).toEqual([
      ['melanie', 2],
      ['caroline', 1],
    ])
    const [c, m, a] = [id('p1:caroline'), id('p1:melanie'), id('p1:auth.ts')]
    expect(await entityEdges(db, [c, m, a], docKeys)).toEqual([
      { source: c, target: a, weight: 3 },
      { source: c, target: m, weight: 2 },
      { source: m, target: a, weight: 1 },
    ])
  })

  it('stores vectors per space and reads them back within the scope', async () => {
    const v = (...xs: number[]) => new Float32Array(xs)
    await putVectors(db, 'lsa:p1', [
      { docKey: k[0] as number, vec: v(1, 0, 0.5) },
      { docKey: k[1] as number, vec: v(0, 1, -2.25) },
      { docKey: k[3] as number, vec: v(0.125, 0.25, 0.5) },
    ])
    await putVectors(db, 'lsa:p1', [{ docKey: k[0] as number, vec: v(9, 9, 9) }])
    await putVectors(db, 'other', [{ docKey: k[0] as number, vec: v(7) }])
    const got = await vectors(db, 'lsa:p1', { projectIds: [P1], user: null })
    expect(got.map((r) => [r.docKey, [...r.vec]])).toEqual([
      [k[3], [0.125, 0.25, 0.5]],
      [k[0], [9, 9, 9]],
    ])
    expect((await docsWithoutVector(db, 'lsa:p1', { projectIds: [P1] }, 10)).map((d) => d.docKey)).toEqual([k[2]])
    expect((await docsWithoutVector(db, 'other', { projectIds: [P1] }, 10)).map((d) => [d.docKey, d.text])).toEqual([
      [k[1], 'Caroline fixed auth.ts'],
      [k[2], 'Melanie and Caroline again'],
      [k[3], 'Caroline owns auth.ts'],
    ])
    await dropSpace(db, 'lsa:p1')
    expect(await vectors(db, 'lsa:p1', {})).toEqual([])
    expect((await vectors(db, 'other', {})).length).toBe(1)
  })

  it('keeps one LSA model per project and the texts it is fitted on', async () => {
    expect(await projectTexts(db, P1, 3)).toEqual(['Caroline owns auth.ts', 'Melanie and Caroline again', 'Caroline fixed auth.ts'])
    expect(await projectTexts(db, P2, 10)).toEqual(['Caroline in another project'])
    expect(await getLsaModel(db, P1)).toBeUndefined()
    await putLsaModel(db, P1, { space: 'lsa:p1:1', docCount: 4, builtAt: 100, model: new Uint8Array([1, 2, 3]) })
    await putLsaModel(db, P1, { space: 'lsa:p1:2', docCount: 5, builtAt: 200, model: new Uint8Array([4, 5]) })
    expect(await getLsaModel(db, P1)).toEqual({ space: 'lsa:p1:2', docCount: 5, builtAt: 200, model: new Uint8Array([4, 5]) })
    expect(await lsaModelInfo(db, P1)).toEqual({ space: 'lsa:p1:2', docCount: 5, builtAt: 200 })
    expect(await lsaModelInfo(db, P2)).toBeUndefined()
  })
})
