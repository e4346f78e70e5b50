import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import path from 'node:path'
import { openSqliteStore } from '../sqlite/sqlite-store.js'
import type { Store } from '../store.js'

/**
 * One empty database of a dialect, for one test: stores opened on it share its rows, as two
 * processes (or two server replicas) on one database do.
 */
export interface ContractDatabase {
  /** Opens a store on this database; a second call opens a second instance (its own connection or pool). */
  open(now: () => number): Promise<Store>
  /** Closes every store it opened and drops the database. */
  close(): Promise<void>
}

/** A dialect the contract suite runs over: its name and how to make an empty database of it. */
export interface ContractDialect {
  name: Store['dialect']
  /** An empty database, or a sentence saying why the dialect cannot run here (the suite then skips it, saying so). */
  create(): Promise<ContractDatabase>
  /** Why this dialect is skipped here (no server found), or undefined when it runs. */
  skip?: string
}

/** Where the SQLite files of the suite go (removed with each database). */
const SQLITE_ROOT = '/tmp/contract'

/** SQLite: a fresh file under /tmp/contract per database; every `open` is a new `SqliteStore` on that file (WAL, busy timeout). */
export const sqliteDialect: ContractDialect = {
  name: 'sqlite',
  async create() {
    mkdirSync(SQLITE_ROOT, { recursive: true })
    const dir = mkdtempSync(path.join(SQLITE_ROOT, 'db-'))
    const file = path.join(dir, 'mnemo.db')
    const opened: Store[] = []
    return {
      async open(now) {
        const store = openSqliteStore({ path: file }, now)
        opened.push(store)
        return store
      },
      async close() {
        for (const store of opened.splice(0)) await store.close()
        rmSync(dir, { recursive: true, force: true })
      },
    }
  },
}

/**
 * Every dialect the contract suite loops over. PostgreSQL joins with one line here once its store passes:
 * `postgresDialect` built on `src/testing/postgres.ts` (a real server, one fresh database per `create`).
 */
export const DIALECTS: readonly ContractDialect[] = [sqliteDialect]
