import { pgChannels, SEARCH_DOC_COLUMNS, SEARCH_MIGRATION } from './pg-channels.js'
import { PG_FACT_PART } from './pg-facts.js'
import { READ_INDEX_MIGRATION } from './pg-schema.js'
import type { PgParts } from './pg-store.js'

/**
 * The whole PostgreSQL dialect: the base store (pg-store.ts) with the search, graph and vector channels
 * (pg-channels.ts) and the fact ledger (pg-facts.ts), their schema steps in order (0002-search, then the ledger's, then the base tables' read indexes).
 */
export const PG_PARTS: PgParts = {
  migrations: [SEARCH_MIGRATION, ...PG_FACT_PART.migrations, READ_INDEX_MIGRATION],
  write: { docColumns: SEARCH_DOC_COLUMNS, facts: PG_FACT_PART.writes },
  channels: pgChannels,
  facts: PG_FACT_PART.facts,
}
