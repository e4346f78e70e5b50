import { MnemoError } from '../../core/errors.js'
import { pgChannels, SEARCH_DOC_COLUMNS, SEARCH_MIGRATION } from './pg-channels.js'
import type { PgParts } from './pg-store.js'

/** What a fact-ledger call does on PostgreSQL until the ledger's part (pg-facts.ts) joins `PG_PARTS`: fail, saying so. */
const noLedger = (operation: string): MnemoError<'STORE_UNAVAILABLE'> =>
  new MnemoError('STORE_UNAVAILABLE', `the typed fact ledger is not available on PostgreSQL in this build (${operation})`, {
    details: { dialect: 'postgres', operation },
    hint: 'use the embedded SQLite store for fact collections',
  })

/**
 * The whole PostgreSQL dialect: the base store (pg-store.ts) with the search, graph and vector channels and their
 * schema step (pg-channels.ts, 0002-search). The fact ledger is not part of it yet: an event with fact operations and
 * every `store.facts` call fail with `STORE_UNAVAILABLE` naming the operation.
 */
export const PG_PARTS: PgParts = {
  migrations: [SEARCH_MIGRATION],
  write: {
    docColumns: SEARCH_DOC_COLUMNS,
    facts: {
      apply: () => Promise.reject(noLedger('apply fact operations')),
      removeOfEvent: async () => {},
      clear: async () => {},
    },
  },
  channels: pgChannels,
  facts: () =>
    new Proxy({} as ReturnType<PgParts['facts']>, {
      get: (_, name) => () => Promise.reject(noLedger(`facts.${String(name)}`)),
    }),
}
