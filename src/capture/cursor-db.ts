import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
// Reading another program's SQLite file, not mnemo's store: that is why the driver appears outside storage/sqlite.
import Database from 'better-sqlite3'
import type { ParseResult } from './derivation.js'
import {
  CURSOR_CHAT_KEY,
  CURSOR_COMPOSER_LIST_KEY,
  folderOfUri,
  parseCursorState,
  type CursorParseOptions,
  type CursorRow,
  type CursorStateSource,
} from './cursor-state.js'
import { asRecord, str } from './transcript-format.js'

/** Options of {@link parseCursorDatabase}: the parse options without the derived ones, plus the lock wait. */
interface CursorDatabaseOptions extends Omit<CursorParseOptions, 'workspaceFolder' | 'composerFolders' | 'fallbackTime'> {
  /** How long to wait for a database Cursor is writing to, in ms. Default 2000. */
  busyTimeoutMs?: number
}

/** The names of a SQLite file's tables (read-only); undefined when it cannot be read as a database. */
export function sqliteTables(file: string): string[] | undefined {
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true, timeout: 500 })
    try {
      return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name)
    } finally {
      db.close()
    }
  } catch {
    return undefined
  }
}

/** The sentence for a driver error: what went wrong with the file, in words. */
function describeSqliteError(error: unknown): string {
  const code = (error as { code?: unknown }).code
  const message = (error as Error).message
  if (code === 'SQLITE_NOTADB') return 'not a SQLite database (Cursor keeps its chats in SQLite state.vscdb files)'
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || String(code).startsWith('SQLITE_BUSY')) {
    return 'the database is locked by another process (Cursor is writing to it): try again, close Cursor, or import a copy of the file'
  }
  if (code === 'SQLITE_CORRUPT') return `the database is damaged: ${message}`
  if (code === 'SQLITE_CANTOPEN') return `cannot open the database: ${message}`
  return `cannot read the database: ${message}`
}

/** The JSON object `value` holds, or undefined. */
function jsonRecord(value: string | undefined): Record<string, unknown> | undefined {
  if (value === undefined) return undefined
  try {
    return asRecord(JSON.parse(value))
  } catch {
    return undefined
  }
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('utf8') : undefined

/** The folder a workspace database belongs to: `folder` of the `workspace.json` beside it. */
function workspaceFolderOf(dbFile: string): string | undefined {
  try {
    const ws = asRecord(JSON.parse(readFileSync(path.join(path.dirname(dbFile), 'workspace.json'), 'utf8')))
    const folder = str(ws?.['folder'])
    return folder ? folderOfUri(folder) : undefined
  } catch {
    return undefined
  }
}

/**
 * For a global database (`…/globalStorage/state.vscdb`): the folder of each composer, from the
 * workspace databases beside it (`…/workspaceStorage/<hash>/state.vscdb`, whose `composer.composerData`
 * lists the workspace's composers, and `workspace.json` its folder). Best effort: unreadable ones are passed over.
 */
function composerFoldersBeside(dbFile: string, timeout: number): Map<string, string> {
  const folders = new Map<string, string>()
  if (path.basename(path.dirname(dbFile)) !== 'globalStorage') return folders
  const storage = path.join(path.dirname(path.dirname(dbFile)), 'workspaceStorage')
  let hashes: string[]
  try {
    hashes = readdirSync(storage).sort()
  } catch {
    return folders
  }
  for (const hash of hashes) {
    const file = path.join(storage, hash, 'state.vscdb')
    const folder = workspaceFolderOf(file)
    if (!folder) continue
    try {
      const db = new Database(file, { readonly: true, fileMustExist: true, timeout })
      try {
        const row = db.prepare('SELECT value FROM ItemTable WHERE key = ?').get(CURSOR_COMPOSER_LIST_KEY) as { value: unknown } | undefined
        const list = jsonRecord(text(row?.value))?.['allComposers']
        for (const c of Array.isArray(list) ? list : []) {
          const id = str(asRecord(c)?.['composerId'])
          if (id && !folders.has(id)) folders.set(id, folder)
        }
      } finally {
        db.close()
      }
    } catch {
      // one unreadable workspace database only loses its folder names
    }
  }
  return folders
}

/**
 * Reads the chats of one Cursor state.vscdb, opened read-only (never written, and never created:
 * the file must exist), and parses them with {@link parseCursorState}. A workspace database's
 * project is the folder its `workspace.json` names; a global database's composers get the folders
 * of the workspace databases beside it that list them.
 *
 * Never throws for content problems: they come back in `error` (not a SQLite database, locked by
 * another process, no Cursor tables, no conversations, …) or as skipped records.
 */
export function parseCursorDatabase(file: string, options: CursorDatabaseOptions): { parse: ParseResult; error?: string } {
  const empty: ParseResult = { events: [], read: 0, skipped: [], unknownTypes: {} }
  const timeout = options.busyTimeoutMs ?? 2000
  let db: Database.Database
  try {
    db = new Database(file, { readonly: true, fileMustExist: true, timeout })
  } catch (cause) {
    return { parse: empty, error: describeSqliteError(cause) }
  }
  try {
    const tables = new Set(
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name),
    )
    if (!tables.has('cursorDiskKV') && !tables.has('ItemTable')) {
      const opencode = ['session', 'message', 'part'].every((t) => tables.has(t))
      return {
        parse: empty,
        error: opencode
          ? "an OpenCode database, not a Cursor one: mnemo does not read OpenCode's SQLite database (only its JSON storage folder)"
          : 'no Cursor chat tables (cursorDiskKV, ItemTable): not a Cursor state.vscdb',
      }
    }
    const kv = tables.has('cursorDiskKV')
    const composerRows = kv
      ? db.prepare("SELECT key, value FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;' ORDER BY key")
      : undefined
    const bubbleRows = kv ? db.prepare('SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?') : undefined
    const itemRow = tables.has('ItemTable') ? db.prepare('SELECT value FROM ItemTable WHERE key = ?') : undefined
    const source: CursorStateSource = {
      *composers(): Iterable<CursorRow> {
        for (const row of (composerRows?.iterate() ?? []) as Iterable<{ key: string; value: unknown }>) {
          const value = text(row.value)
          if (value !== undefined) yield { key: row.key, value }
        }
      },
      bubbles(composerId) {
        const out = new Map<string, string>()
        const prefix = `bubbleId:${composerId}:`
        for (const row of (bubbleRows?.all(prefix, `bubbleId:${composerId};`) ?? []) as { key: string; value: unknown }[]) {
          const value = text(row.value)
          if (value !== undefined) out.set(row.key.slice(prefix.length), value)
        }
        return out
      },
      item(key) {
        return text((itemRow?.get(key) as { value: unknown } | undefined)?.value)
      },
    }
    const workspaceFolder = workspaceFolderOf(file)
    const fallbackTime = Math.floor(statSync(file).mtimeMs)
    const parse = parseCursorState(source, {
      ...options,
      fallbackTime,
      ...(workspaceFolder ? { workspaceFolder } : { composerFolders: composerFoldersBeside(file, timeout) }),
    })
    if (parse.events.length > 0 || parse.skipped.length > 0) return { parse }
    // Nothing here: say where the chats are, when we know.
    const list = jsonRecord(source.item(CURSOR_COMPOSER_LIST_KEY))?.['allComposers']
    const listed = Array.isArray(list) ? list.length : 0
    const global = path.join(path.dirname(path.dirname(path.dirname(file))), 'globalStorage', 'state.vscdb')
    return {
      parse,
      error:
        listed > 0
          ? `no conversations stored here: this workspace's ${listed} Composer chat(s) are kept in Cursor's global database (${global}); import that file`
          : `no conversations with messages (no composerData rows with bubbles, no ${CURSOR_CHAT_KEY})`,
    }
  } catch (cause) {
    return { parse: empty, error: describeSqliteError(cause) }
  } finally {
    db.close()
  }
}
