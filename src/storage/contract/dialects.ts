import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import path from 'node:path'
import { afterAll } from 'vitest'
import { whyNoPostgres, withPostgres } from '../../testing/postgres.js'
import { PgDb } from '../postgres/pg-db.js'
import { openPostgresStore } from '../postgres/pg-store.js'
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
const sqliteDialect: ContractDialect = {
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

/** The test file's PostgreSQL database (one per file, dropped after it), or undefined when no server can be had. */
const pgDatabase = await withPostgres()
afterAll(() => pgDatabase?.drop())
let pgSchemas = 0

/**
 * PostgreSQL: a real server (src/testing/postgres.ts), one database per test file and a fresh schema of it per
 * database here (`search_path` in the URL), so each test starts empty; every `open` is a new `PostgresStore` (its own
 * pool) on that schema, as two replicas on one database.
 */
const postgresDialect: ContractDialect = {
  name: 'postgres',
  ...(pgDatabase ? {} : { skip: whyNoPostgres() ?? 'no PostgreSQL server' }),
  async create() {
    if (!pgDatabase) throw new Error(`no PostgreSQL server: ${whyNoPostgres()}`)
    const schema = `contract_${process.pid}_${++pgSchemas}`
    const admin = PgDb.open(pgDatabase.url)
    await admin.query('create schema', `CREATE SCHEMA ${schema}`)
    const url = `${pgDatabase.url}${pgDatabase.url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`
    const opened: Store[] = []
    return {
      async open(now) {
        const store = await openPostgresStore(url, { now })
        opened.push(store)
        return store
      },
      async close() {
        for (const store of opened.splice(0)) await store.close()
        await admin.query('drop schema', `DROP SCHEMA ${schema} CASCADE`)
        await admin.close()
      },
    }
  },
}

/** Every dialect the contract suite loops over. */
export const DIALECTS: readonly ContractDialect[] = [sqliteDialect, postgresDialect]
