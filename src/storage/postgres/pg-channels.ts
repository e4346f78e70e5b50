import type { IndexedText } from '../../core/types.js'
import type { GraphIndex, SearchIndex, VectorIndex } from '../store.js'
import type { PgDb } from './pg-db.js'
import * as graph from './pg-graph.js'
import * as search from './pg-search.js'
import { SEARCH_MIGRATION } from './pg-search-schema.js'
import { searchVector } from './pg-text.js'
import * as vec from './pg-vectors.js'

// What the search, graph and vector channels give the PostgreSQL store (pg-store.ts PgParts): their schema step, the
// column the derivation writes into each search document, and the port methods bound to one database.

/** The search index's own integrity problems (pg-search.ts), for the store's integrity check. */
export { searchIntegrity } from './pg-search.js'
export { SEARCH_MIGRATION }

/**
 * The search document columns the derivation writes beside the base schema's (pg-write.ts `PgDocColumn`): `tsv`, the
 * document's tsvector (`searchVector` of its IndexedText), bound as `$n::tsvector`.
 */
export const SEARCH_DOC_COLUMNS: readonly { name: string; cast: string; value(index: IndexedText): unknown }[] = [
  { name: 'tsv', cast: 'tsvector', value: searchVector },
]

/** The SearchIndex, GraphIndex and VectorIndex methods of the store on `db`. */
export function pgChannels(db: PgDb): SearchIndex & GraphIndex & VectorIndex {
  return {
    searchText: (options) => search.searchText(db, options),
    matchCount: (options) => search.matchCount(db, options),
    countDocs: (scope) => search.countDocs(db, scope),
    docsInTimeRange: (options) => search.docsInTimeRange(db, options),
    docs: (keys) => search.docs(db, keys),
    docRoles: (keys) => search.docRoles(db, keys),
    neighbors: (docs, span, visible) => search.neighbors(db, docs, span, visible),
    entityNames: (projectIds) => graph.entityNames(db, projectIds),
    findEntities: (scope, refs, maxDocs) => graph.findEntities(db, scope, refs, maxDocs),
    entityMentions: (ids, scope, limit) => graph.entityMentions(db, ids, scope, limit),
    coMentioned: (ids, scope, limit, maxDocs) => graph.coMentioned(db, ids, scope, limit, maxDocs),
    searchEntities: (scope, text, limit) => graph.searchEntities(db, scope, text, limit),
    sampleDocs: (scope, entityId, limit) => graph.sampleDocs(db, scope, entityId, limit),
    entitiesInDocs: (keys, limit) => graph.entitiesInDocs(db, keys, limit),
    entitiesById: (ids) => graph.entitiesById(db, ids),
    entityEdges: (ids, keys) => graph.entityEdges(db, ids, keys),
    vectors: (space, scope, visible) => vec.vectors(db, space, scope, visible),
    putVectors: (space, rows) => vec.putVectors(db, space, rows),
    dropSpace: (space) => vec.dropSpace(db, space),
    docsWithoutVector: (space, scope, limit) => vec.docsWithoutVector(db, space, scope, limit),
    projectTexts: (projectId, limit) => vec.projectTexts(db, projectId, limit),
    getLsaModel: (projectId) => vec.getLsaModel(db, projectId),
    lsaModelInfo: (projectId) => vec.lsaModelInfo(db, projectId),
    putLsaModel: (projectId, row) => vec.putLsaModel(db, projectId, row),
  }
}
