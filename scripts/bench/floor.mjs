// The floor of import and rebuild: the least work that stores a line of the log and makes it searchable.
// Parse each line (JSON.parse), insert the raw line into a table and its text into an FTS5 table, one transaction
// per batch, WAL with synchronous=FULL — as mnemo's store is configured.
import Database from 'better-sqlite3'

/** Every string of a parsed record, joined: about the text an indexer would index. */
function textOf(value, out = []) {
  if (typeof value === 'string') out.push(value)
  else if (Array.isArray(value)) for (const v of value) textOf(v, out)
  else if (value && typeof value === 'object') for (const v of Object.values(value)) textOf(v, out)
  return out
}

/**
 * Stores `batches` (arrays of raw JSON lines) into a fresh database at `dbPath`.
 *
 * @returns milliseconds taken and lines stored.
 */
export function parseInsertFloor(dbPath, batches) {
  const db = new Database(dbPath)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.exec(
    "CREATE TABLE raw (seq INTEGER PRIMARY KEY, line TEXT NOT NULL); CREATE VIRTUAL TABLE raw_fts USING fts5(body, tokenize = 'porter unicode61 remove_diacritics 2')",
  )
  const insertRaw = db.prepare('INSERT INTO raw (line) VALUES (?)')
  const insertFts = db.prepare('INSERT INTO raw_fts (rowid, body) VALUES (?, ?)')
  let lines = 0
  const t0 = performance.now()
  const store = db.transaction((batch) => {
    for (const line of batch) {
      const record = JSON.parse(line)
      const { lastInsertRowid } = insertRaw.run(line)
      insertFts.run(lastInsertRowid, textOf(record.message ?? record).join('\n'))
      lines++
    }
  })
  for (const batch of batches()) store(batch)
  const ms = performance.now() - t0
  db.close()
  return { ms, lines }
}
