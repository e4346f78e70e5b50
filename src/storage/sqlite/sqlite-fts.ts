import type { SqliteDb } from './sqlite-db.js'

// Writes to the full-text index (search_fts, contentless since migration 11) that keep its BM25 statistics exact.

/**
 * Removes document `docKey` from the full-text index, keeping the index's row count and column totals exact.
 *
 * BM25 (fts5_aux.c) reads the number of rows and each column's total size, in tokens, from the index's "averages"
 * record (`search_fts_data` id 1: SQLite varints — rows, then one total per column). A contentless_delete=1 table
 * drops a row from its postings and its column sizes (`search_fts_docsize`) but leaves that record as it was, so
 * after a forget every score would differ from the one a rebuild gives (rebuild must give back the same state). The
 * record is corrected here by the deleted row's sizes, as FTS5 does itself for a table with content. FTS5 keeps the
 * totals of an open transaction in memory and writes them at the next savepoint or commit: the SAVEPOINT makes it
 * write them (stale) and read them again after, so the corrected record is the one that counts. Writing a shadow
 * table needs SQLite's defensive mode off (`unsafeMode`) for that one statement.
 */
export function deleteFromIndex(s: SqliteDb, docKey: number): void {
  const sizes = s.stmt('SELECT sz FROM search_fts_docsize WHERE id = ?').pluck().get(docKey) as Buffer | undefined
  s.stmt('DELETE FROM search_fts WHERE rowid = ?').run(docKey)
  if (sizes === undefined) return
  s.db.exec('SAVEPOINT fts_totals')
  try {
    const averages = s.stmt('SELECT block FROM search_fts_data WHERE id = 1').pluck().get() as Buffer | undefined
    if (averages !== undefined && averages.length > 0) {
      const [rows = 0, ...totals] = readVarints(averages)
      const removed = readVarints(sizes)
      const next = [Math.max(0, rows - 1), ...totals.map((t, i) => Math.max(0, t - (removed[i] ?? 0)))]
      s.db.unsafeMode(true)
      try {
        s.stmt('UPDATE search_fts_data SET block = ? WHERE id = 1').run(Buffer.from(next.flatMap(varint)))
      } finally {
        s.db.unsafeMode(false)
      }
    }
    s.db.exec('RELEASE fts_totals')
  } catch (error) {
    s.db.exec('ROLLBACK TO fts_totals; RELEASE fts_totals')
    throw error
  }
}

/** The SQLite varints (sqlite3GetVarint: big-endian, 7 bits a byte, the 9th byte 8 bits) that fill `bytes`. */
export function readVarints(bytes: Buffer): number[] {
  const out: number[] = []
  let i = 0
  while (i < bytes.length) {
    let value = 0
    for (let n = 1; i < bytes.length; n++) {
      const b = bytes[i++]!
      if (n === 9) {
        value = value * 256 + b
        break
      }
      value = value * 128 + (b & 0x7f)
      if ((b & 0x80) === 0) break
    }
    out.push(value)
  }
  return out
}

/** `value` (0 ≤ value < 2^53) as a SQLite varint. Totals are token counts: far below the 9-byte form. */
function varint(value: number): number[] {
  if (value < 0x80) return [value]
  const groups: number[] = []
  for (let v = value; v > 0; v = Math.floor(v / 128)) groups.unshift(v % 128)
  return groups.map((g, i) => (i < groups.length - 1 ? g | 0x80 : g))
}
