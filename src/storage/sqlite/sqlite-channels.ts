import type { GraphIndex, SearchIndex, VectorIndex } from '../store.js'
import type { SqliteDb } from './sqlite-db.js'
import * as graph from './sqlite-graph.js'
import * as search from './sqlite-search.js'

// The retrieval side of the SQLite store: the search, graph and vector channels, as pg-channels.ts is PostgreSQL's.

/**
 * The SearchIndex, GraphIndex and VectorIndex methods of the store on `s`, each its body in sqlite-search.ts or
 * sqlite-graph.ts called in an async function (so a driver error rejects the promise it returns, as every store
 * method's does); the writes go through `write` (the store's lock-wait rule, see `SqliteStore.withoutLockWait`).
 */
export function sqliteChannels(s: SqliteDb, write: <T>(fn: () => T) => T): SearchIndex & GraphIndex & VectorIndex {
  return {
    searchText: async (options) => search.searchText(s, options),
    matchCount: async (options) => search.matchCount(s, options),
    countDocs: async (scope) => search.countDocs(s, scope),
    docsInTimeRange: async (options) => search.docsInTimeRange(s, options),
    docs: async (docKeys) => search.docs(s, docKeys),
    docRoles: async (docKeys) => search.docRoles(s, docKeys),
    neighbors: async (docs, span, visible) => search.neighbors(s, docs, span, visible),
    entityNames: async (projectIds) => graph.entityNames(s, projectIds),
    findEntities: async (scope, refs, maxDocs) => graph.findEntities(s, scope, refs, maxDocs),
    entityMentions: async (ids, scope, limit) => graph.entityMentions(s, ids, scope, limit),
    coMentioned: async (ids, scope, limit, maxDocs) => graph.coMentioned(s, ids, scope, limit, maxDocs),
    searchEntities: async (scope, text, limit) => graph.searchEntities(s, scope, text, limit),
    sampleDocs: async (scope, entityId, limit) => graph.sampleDocs(s, scope, entityId, limit),
    entitiesInDocs: async (docKeys, limit) => graph.entitiesInDocs(s, docKeys, limit),
    entitiesById: async (ids) => graph.entitiesById(s, ids),
    entityEdges: async (ids, docKeys) => graph.entityEdges(s, ids, docKeys),
    vectors: async (space, scope, visible) => search.vectors(s, space, scope, visible),
    putVectors: async (space, rows) => write(() => search.putVectors(s, space, rows)),
    dropSpace: async (space) => write(() => search.dropSpace(s, space)),
    docsWithoutVector: async (space, scope, limit) => search.docsWithoutVector(s, space, scope, limit),
    projectTexts: async (projectId, limit) => search.projectTexts(s, projectId, limit),
    getLsaModel: async (projectId) => search.getLsaModel(s, projectId),
    lsaModelInfo: async (projectId) => search.lsaModelInfo(s, projectId),
    putLsaModel: async (projectId, row) => write(() => search.putLsaModel(s, projectId, row)),
  }
}
