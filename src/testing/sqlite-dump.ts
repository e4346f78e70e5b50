import Database from 'better-sqlite3'

/**
 * The rows of `tables` of the SQLite file `file`, each table as one JSON text (rows ordered by their first two
 * columns, BLOBs as hex), for tests that compare two stores table by table. Opens the file read-only.
 *
 * @throws {Error} from better-sqlite3 — the file cannot be opened, or a table is missing.
 */
export function dumpTables(file: string, tables: readonly string[]): Record<string, string> {
  const db = new Database(file, { readonly: true })
  try {
    const out: Record<string, string> = {}
    for (const t of tables)
      out[t] = JSON.stringify(db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2`).raw().all(), (_k, v: unknown) =>
        Buffer.isBuffer(v) ? v.toString('hex') : v,
      )
    return out
  } finally {
    db.close()
  }
}
