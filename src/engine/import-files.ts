import { closeSync, openSync, readdirSync, readFileSync, readSync, type Stats, statSync } from 'node:fs'
import path from 'node:path'
import { MnemoError } from '../core/errors.js'
import type { EventInput, ProjectRef } from '../core/types.js'
import type { AppendResult } from '../storage/store.js'
import { parseClaudeTranscript } from '../capture/claude-transcript.js'
import { parseCodexRollout } from '../capture/codex-rollout.js'
import { parseCursorDatabase, sqliteTables } from '../capture/cursor-db.js'
import type { ParseResult } from '../capture/derivation.js'
import { isGeminiJsonl, isGeminiSession, parseGeminiJsonl, parseGeminiSession } from '../capture/gemini-session.js'
import { isLocomo, parseLocomo } from '../capture/locomo.js'
import {
  isOpenCodeDatabaseName,
  isOpenCodeStorage,
  openCodeDatabaseNear,
  openCodeRecordOf,
  openCodeSqliteMessage,
  parseOpenCodeStorage,
} from '../capture/opencode-storage.js'
import type { Redactor } from '../capture/sanitize.js'
import { detectTranscriptFormat } from '../capture/transcript-format.js'
import type { DerivePool } from './derive-pool.js'
import type { DeriveAnswer } from './derive-worker.js'
import type { EngineContext } from './engine-context.js'
import { isMnemoExport } from './export.js'
import { importExport } from './export-io.js'
import type { ImportFormat } from './import-format.js'

export { IMPORT_FORMATS, toImportFormat, type ImportFormat } from './import-format.js'

/** Largest file `import` reads, in bytes (512 MiB). */
const MAX_IMPORT_FILE_BYTES = 512 * 1024 * 1024

/** One file's parse, before anything is stored. */
interface ParsedFile {
  file: string
  format: Exclude<ImportFormat, 'auto' | 'mnemo'> | undefined
  parse: ParseResult
  /** Why the file could not be read at all (then `parse` is empty). */
  error?: string
}

/**
 * Lists what an import of `target` reads: the file itself, or under a folder
 * (recursively, sorted, skipping dot-folders and `node_modules`) every
 * `.jsonl` and `.json` file, every Cursor `.vscdb` database and OpenCode
 * SQLite database (`opencode.db`, to say it is not read), and every OpenCode
 * storage folder (one entry, not its files). A `workspace.json` beside a
 * `state.vscdb` is read with the database, not listed.
 *
 * @throws {MnemoError} `NOT_FOUND` — `target` does not exist.
 */
export function listImportFiles(target: string): string[] {
  let st: Stats
  try {
    st = statSync(target)
  } catch {
    throw new MnemoError('NOT_FOUND', `no file or folder at ${target}`, { details: { kind: 'file', id: target } })
  }
  if (st.isFile() || isOpenCodeStorage(target)) return [target]
  const out: string[] = []
  const walk = (dir: string): void => {
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))
    const cursorDb = entries.some((e) => e.isFile() && e.name === 'state.vscdb')
    for (const entry of entries) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) {
        if (entry.name.startsWith('.') || entry.name === 'node_modules') continue
        if (isOpenCodeStorage(full)) out.push(full)
        else walk(full)
      } else if (entry.isFile() && (/\.(jsonl|json|vscdb)$/i.test(entry.name) || isOpenCodeDatabaseName(entry.name))) {
        if (!(cursorDb && entry.name === 'workspace.json')) out.push(full)
      }
    }
  }
  walk(target)
  return out
}

/** Whether `file` starts with the SQLite header (`SQLite format 3\0`). False for folders and unreadable files. */
function isSqliteFile(file: string): boolean {
  let fd: number | undefined
  try {
    fd = openSync(file, 'r')
    const head = Buffer.alloc(16)
    return readSync(fd, head, 0, 16, 0) === 16 && head.toString('latin1') === 'SQLite format 3\0'
  } catch {
    return false
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/**
 * Whether an import entry is a database or a folder (an OpenCode storage
 * folder, a Cursor or OpenCode SQLite file) rather than a text file: such an
 * entry is never read whole as text.
 */
function isStoreImport(file: string): boolean {
  try {
    return statSync(file).isDirectory() || isSqliteFile(file)
  } catch {
    return false
  }
}

/** `opencode` or `cursor` when `auto` should read `file` as that agent's store; undefined for text formats. */
function storeFormatOf(file: string): 'opencode' | 'cursor' | undefined {
  try {
    if (statSync(file).isDirectory()) return 'opencode'
  } catch {
    return undefined
  }
  if (isOpenCodeDatabaseName(path.basename(file)) || openCodeRecordOf(file)) return 'opencode'
  if (/\.vscdb$/i.test(file)) return 'cursor'
  if (!isSqliteFile(file)) return undefined
  const tables = sqliteTables(file) ?? []
  return ['session', 'message', 'part'].every((t) => tables.includes(t)) && !tables.includes('ItemTable') ? 'opencode' : 'cursor'
}

/**
 * An OpenCode import: a storage folder (every session), a session file inside
 * one (that session), or anything else with the reason it is not one (an
 * OpenCode 1.2+ SQLite database is named as such).
 */
function parseOpenCodeImport(file: string, options: { redact?: Redactor; project?: ProjectRef }): ParsedFile {
  const empty: ParseResult = { events: [], read: 0, skipped: [], unknownTypes: {} }
  const fail = (error: string): ParsedFile => ({ file, format: 'opencode', parse: empty, error })
  const common = { ...(options.redact ? { redact: options.redact } : {}), ...(options.project ? { project: options.project } : {}) }
  let dir = false
  try {
    dir = statSync(file).isDirectory()
  } catch (cause) {
    return fail(`cannot read: ${(cause as Error).message}`)
  }
  let root: string
  let parse: ParseResult
  if (dir) {
    if (!isOpenCodeStorage(file)) {
      const db = openCodeDatabaseNear(file)
      return fail(db ? openCodeSqliteMessage(db) : 'not an OpenCode storage folder (it needs session/, message/ and part/ folders)')
    }
    root = file
    parse = parseOpenCodeStorage({ file, ...common })
    if (parse.read === 0) {
      const db = openCodeDatabaseNear(file)
      return { file, format: 'opencode', parse, error: db ? openCodeSqliteMessage(db) : `no sessions under ${path.join(file, 'session')}` }
    }
  } else {
    if (isOpenCodeDatabaseName(path.basename(file)) || isSqliteFile(file)) return fail(openCodeSqliteMessage(file))
    const record = openCodeRecordOf(file)
    if (!record) return fail('not an OpenCode storage folder or a session file inside one (storage/session/<project>/<session>.json)')
    if (record.kind !== 'session')
      return fail(
        `an OpenCode ${record.kind} file: import the storage folder (${record.root}) or a session file (session/<project>/<session>.json)`,
      )
    root = record.root
    parse = parseOpenCodeStorage({ file: root, session: file, ...common })
  }
  const first = parse.skipped[0]
  if (parse.events.length === 0 && first)
    return {
      file,
      format: 'opencode',
      parse,
      error: `no valid records; first skipped: ${path.join(root, String(first.line))}: ${first.reason}`,
    }
  return { file, format: 'opencode', parse }
}

/** A Cursor import: one state.vscdb, read-only. */
function parseCursorImport(file: string, options: { redact?: Redactor; project?: ProjectRef }): ParsedFile {
  const r = parseCursorDatabase(file, {
    file,
    ...(options.redact ? { redact: options.redact } : {}),
    ...(options.project ? { project: options.project } : {}),
  })
  const first = r.parse.skipped[0]
  const error =
    r.error ?? (r.parse.events.length === 0 && first ? `no valid records; first skipped: ${first.line}: ${first.reason}` : undefined)
  return { file, format: 'cursor', parse: r.parse, ...(error ? { error } : {}) }
}

/**
 * Reads and parses one file in the given format (`auto` sniffs it: a folder
 * or a file under an OpenCode storage folder is OpenCode, a `.vscdb` or other
 * SQLite file Cursor (an OpenCode database is named as not read), a JSON
 * array of conversations is LoCoMo, a JSON object with `sessionId` and
 * `messages` a Gemini CLI session, JSONL whose first line is a session header (or with
 * `$set`/`$rewindTo` lines) a Gemini CLI 0.61+ session; other JSONL is told apart by its record types).
 * Never throws for content problems: they come back in `error` or as skipped
 * lines. `candidateRoots` are the folders a Gemini session's `projectHash`
 * is matched against (default: the process cwd).
 */
export function parseImportFile(
  file: string,
  format: ImportFormat,
  options: { redact?: Redactor; project?: ProjectRef; candidateRoots?: readonly string[] },
): ParsedFile {
  const store = format === 'auto' ? storeFormatOf(file) : undefined
  if (format === 'opencode' || store === 'opencode') return parseOpenCodeImport(file, options)
  if (format === 'cursor' || store === 'cursor') return parseCursorImport(file, options)
  const empty: ParseResult = { events: [], read: 0, skipped: [], unknownTypes: {} }
  let text: string
  try {
    if (statSync(file).size > MAX_IMPORT_FILE_BYTES)
      return { file, format: undefined, parse: empty, error: `file is larger than ${MAX_IMPORT_FILE_BYTES} bytes` }
    // A UTF-8 byte-order mark is not content (editors on Windows add it).
    text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '')
  } catch (cause) {
    return { file, format: undefined, parse: empty, error: `cannot read file: ${(cause as Error).message}` }
  }
  if (format === 'mnemo')
    return { file, format: undefined, parse: empty, error: 'a mnemo export must be imported on its own, not inside a folder' }
  let resolved: Exclude<ImportFormat, 'auto' | 'mnemo' | 'opencode' | 'cursor'> | undefined = format === 'auto' ? undefined : format
  let json: unknown
  if (resolved === undefined || resolved === 'locomo') {
    const trimmed = text.trimStart()
    if (trimmed.startsWith('[')) {
      try {
        json = JSON.parse(text)
        if (resolved === undefined && isLocomo(json)) resolved = 'locomo'
        else if (resolved === undefined && isGeminiPromptLog(json)) {
          return {
            file,
            format: undefined,
            parse: empty,
            error: "Gemini CLI's prompt log (logs.json), not a session: nothing to import (the sessions are in chats/)",
          }
        }
      } catch (cause) {
        if (resolved === 'locomo') return { file, format: 'locomo', parse: empty, error: `invalid JSON: ${(cause as Error).message}` }
      }
    } else if (resolved === 'locomo') return { file, format: 'locomo', parse: empty, error: 'LoCoMo data must be a JSON array' }
  }
  if ((resolved === undefined || resolved === 'gemini') && isGeminiJsonl(text)) {
    const opts = {
      file,
      ...(options.redact ? { redact: options.redact } : {}),
      ...(options.project ? { project: options.project } : {}),
      ...(options.candidateRoots ? { candidateRoots: options.candidateRoots } : {}),
    }
    return { file, format: 'gemini', parse: parseGeminiJsonl(text, opts) }
  }
  if (resolved === undefined || resolved === 'gemini') {
    if (text.trimStart().startsWith('{')) {
      try {
        const parsed: unknown = JSON.parse(text)
        if (resolved === 'gemini' || isGeminiSession(parsed)) {
          json = parsed
          resolved = 'gemini'
        }
      } catch (cause) {
        const named = /^session-.*\.json$/i.test(path.basename(file))
        if (resolved === 'gemini' || named) {
          const kind = detectTranscriptFormat(text)
          const hint = kind
            ? ` (it looks like ${kind === 'codex' ? 'Codex rollout' : 'Claude Code'} JSONL: try --format auto)`
            : named
              ? ' (a truncated Gemini CLI session?)'
              : ''
          if (resolved === 'gemini' || !kind)
            return { file, format: 'gemini', parse: empty, error: `invalid JSON: ${(cause as Error).message}${hint}` }
        }
        // JSONL starts with '{' too: detected below
      }
    } else if (resolved === 'gemini') return { file, format: 'gemini', parse: empty, error: 'a Gemini CLI session must be a JSON object' }
  }
  resolved ??= detectTranscriptFormat(text)
  if (resolved === undefined) {
    return {
      file,
      format: undefined,
      parse: empty,
      error: 'unrecognised format (not Claude Code JSONL, Codex rollout JSONL, Gemini CLI session JSON or LoCoMo JSON); pass --format',
    }
  }
  const opts = { file, ...(options.redact ? { redact: options.redact } : {}), ...(options.project ? { project: options.project } : {}) }
  switch (resolved) {
    case 'locomo':
      return { file, format: resolved, parse: parseLocomo(json, options.redact ? { redact: options.redact } : {}) }
    case 'claude-code':
      return { file, format: resolved, parse: parseClaudeTranscript(text, opts) }
    case 'codex':
      return { file, format: resolved, parse: parseCodexRollout(text, opts) }
    case 'gemini':
      return {
        file,
        format: resolved,
        parse: parseGeminiSession(json, options.candidateRoots ? { ...opts, candidateRoots: options.candidateRoots } : opts),
      }
  }
}

/** Gemini CLI's per-project `logs.json`: an array of `{sessionId, messageId, type, message, timestamp}`, the user's prompts only. */
function isGeminiPromptLog(json: unknown): boolean {
  if (!Array.isArray(json) || json.length === 0) return false
  const first = json[0] as Record<string, unknown> | null
  return (
    typeof first === 'object' &&
    first !== null &&
    typeof first['sessionId'] === 'string' &&
    'messageId' in first &&
    typeof first['message'] === 'string'
  )
}

/** Per-file outcome of an import. */
export interface ImportFileReport {
  file: string
  format: string | undefined
  /** Records read (lines, turns), bad ones included. */
  read: number
  /** New events written to the log. */
  imported: number
  /** Valid records already in the log (a re-import). */
  duplicates: number
  observations: number
  /** Steps not stored again because another capture path (hooks, another import) had already stored them in the same session. */
  covered: number
  skipped: { line: number | string; reason: string }[]
  unknownTypes: Record<string, number>
  /** Why the file could not be imported at all. */
  error?: string
}

export interface ImportReport {
  files: ImportFileReport[]
  read: number
  imported: number
  duplicates: number
  observations: number
  covered: number
  skipped: number
  unknown: number
}

/**
 * Most events one `append` of an import writes: one transaction, so a crash loses at most the batch being written
 * (what was committed is whole, and a re-import adds the rest), and a hook waiting for the write lock waits for at
 * most this many events. The events of several small files go in one batch: each commit waits for the disk (a WAL
 * sync, ~2 ms here), and a session's transcript holds ~40 events.
 */
export const IMPORT_BATCH_EVENTS = 500

/**
 * Batches an import hands to its derive pool before it appends the first of them (and keeps handed over ahead of the
 * one it appends). With one, the writer thread waited for the worker 0.5–0.9 s in all over the bench's 17 batches
 * (the worker's start, and its pace at a machine's load); with 3, 0.12–0.2 s (docs/STORAGE.md). A crash loses what was
 * parsed and not appended, as before: the files still hold it, and a re-import adds it.
 */
const IMPORT_BATCHES_AHEAD = 3

/**
 * Imports transcript files (every format but a mnemo export): parses each in
 * turn, appends their events through `append` in batches of
 * `IMPORT_BATCH_EVENTS` (each batch one transaction, filled from as many files
 * as it takes; re-imports are duplicates), and reports per file.
 *
 * @param target - What the user named (for messages).
 * @throws {MnemoError} `IMPORT_FAILED` — not one valid record in any file (the message names the first file's problem).
 */
async function importFiles(
  target: string,
  files: readonly string[],
  format: ImportFormat,
  options: {
    redact?: Redactor
    project?: ProjectRef
    candidateRoots: readonly string[]
    /** Makes parsed events the importing user's (`Access.own`), before they are derived. */
    own: (events: readonly EventInput[]) => EventInput[]
    /**
     * Appends a batch; `ahead`, when given, holds `events[i]`'s derivation at `derived[i]` and its encoded payload at
     * `payloads[i]` (where undefined, the store derives or encodes it).
     */
    append: (events: readonly EventInput[], ahead?: DeriveAnswer) => Promise<AppendResult>
    /** Derives each batch on worker threads while the next files are parsed and the batch before is written. */
    ahead?: DerivePool
  },
): Promise<ImportReport> {
  const report: ImportReport = { files: [], read: 0, imported: 0, duplicates: 0, observations: 0, covered: 0, skipped: 0, unknown: 0 }
  let valid = 0
  type Pending = { event: EventInput; file: ImportFileReport }
  // Events parsed but not appended yet, each with the report of its file.
  let pending: Pending[] = []
  // Batches handed to `ahead` and not appended yet, oldest first.
  const deriving: Pending[][] = []
  // Appends a batch as one transaction and counts its outcome into each event's file.
  const appendNow = async (batch: Pending[], ahead?: DeriveAnswer): Promise<void> => {
    const r = await options.append(
      batch.map((p) => p.event),
      ahead,
    )
    batch.forEach(({ file }, i) => {
      const outcome = r.perEvent[i]
      if (r.seqs[i] === undefined) file.duplicates++
      else file.imported++
      file.observations += outcome?.observations ?? 0
      file.covered += outcome?.covered ?? 0
    })
  }
  // With `ahead`, a batch is appended once IMPORT_BATCHES_AHEAD more are handed over (or at the end), so the workers
  // derive it while this thread parses on; batches are still appended one at a time, in order.
  const appendBatch = async (batch: Pending[]): Promise<void> => {
    if (options.ahead === undefined) return appendNow(batch)
    options.ahead.push(batch.map((p) => p.event))
    deriving.push(batch)
    if (deriving.length > IMPORT_BATCHES_AHEAD) await appendNow(deriving.shift()!, options.ahead.shiftWithPayloads())
  }
  for (const file of files) {
    const parsed = parseImportFile(file, format, {
      ...(options.redact ? { redact: options.redact } : {}),
      ...(options.project ? { project: options.project } : {}),
      candidateRoots: options.candidateRoots,
    })
    const fileReport: ImportFileReport = {
      file,
      format: parsed.format,
      read: parsed.parse.read,
      imported: 0,
      duplicates: 0,
      observations: 0,
      covered: 0,
      skipped: parsed.parse.skipped,
      unknownTypes: parsed.parse.unknownTypes,
    }
    if (parsed.error) fileReport.error = parsed.error
    for (const event of options.own(parsed.parse.events)) pending.push({ event, file: fileReport })
    if (pending.length >= IMPORT_BATCH_EVENTS) {
      let at = 0
      for (; pending.length - at >= IMPORT_BATCH_EVENTS; at += IMPORT_BATCH_EVENTS)
        await appendBatch(pending.slice(at, at + IMPORT_BATCH_EVENTS))
      pending = pending.slice(at)
    }
    valid += parsed.parse.events.length
    if (parsed.parse.events.length === 0 && !fileReport.error) {
      const why = parsed.parse.skipped[0]
      fileReport.error = why ? `no valid records; first skipped: ${why.reason}` : 'no valid records'
    }
    report.files.push(fileReport)
  }
  if (pending.length > 0) await appendBatch(pending)
  while (deriving.length > 0) await appendNow(deriving.shift()!, options.ahead?.shiftWithPayloads())
  for (const fileReport of report.files) {
    report.read += fileReport.read
    report.imported += fileReport.imported
    report.duplicates += fileReport.duplicates
    report.observations += fileReport.observations
    report.covered += fileReport.covered
    report.skipped += fileReport.skipped.length
    report.unknown += Object.values(fileReport.unknownTypes).reduce((a, b) => a + b, 0)
  }
  if (valid === 0) {
    const first = report.files.find((f) => f.error)
    throw new MnemoError(
      'IMPORT_FAILED',
      files.length === 0
        ? `nothing to import: no .jsonl or .json files, OpenCode storage or Cursor state.vscdb under ${target}`
        : `no records imported from ${target}: ${report.read} read, ${report.skipped} skipped${first?.error ? ` (${first.error})` : ''}`,
      { details: { file: target, read: report.read, skipped: report.skipped } },
    )
  }
  return report
}

/** `MnemoEngine.importPath`: a mnemo export through `importExport`, anything else through `importFiles`. */
export async function importPath(
  ctx: EngineContext,
  target: string,
  options: { format?: ImportFormat; project?: ProjectRef },
): Promise<ImportReport> {
  const files = listImportFiles(target)
  // A folder or a database (an agent's session store) is never a mnemo export: it is not read as text.
  if (
    files.length === 1 &&
    !isStoreImport(files[0]!) &&
    (options.format === undefined || options.format === 'auto' || options.format === 'mnemo')
  ) {
    const text = readFileSync(files[0]!, 'utf8')
    if (options.format === 'mnemo' || isMnemoExport(text)) {
      const r = await importExport(ctx, text, files[0]!)
      const observations = r.observations
      return {
        files: [
          {
            file: files[0]!,
            format: 'mnemo',
            read: r.manifest.counts.events,
            imported: r.events,
            duplicates: r.duplicates,
            observations,
            covered: r.covered,
            skipped: [],
            unknownTypes: {},
          },
        ],
        read: r.manifest.counts.events,
        imported: r.events,
        duplicates: r.duplicates,
        observations,
        covered: r.covered,
        skipped: 0,
        unknown: 0,
      }
    }
  }
  // A Gemini session names its project only by a hash of its root: try the folder we run in and the projects already known.
  const candidateRoots = [process.cwd(), ...(await ctx.store.listProjects()).map((p) => p.root).filter((r) => r.startsWith('/'))]
  const ahead = await openImportPool(ctx, files)
  try {
    return await importFiles(target, files, options.format ?? 'auto', {
      ...(ctx.redact ? { redact: ctx.redact } : {}),
      ...(options.project ? { project: options.project } : {}),
      candidateRoots,
      own: (events) => ctx.access.own(events),
      append: (events, ahead) =>
        ctx.store.append(
          events.map((event, i) => {
            const storedPayload = ahead?.payloads?.[i]
            const storedTexts = ahead?.texts?.[i]
            return {
              event,
              derive: () => ahead?.derived[i] ?? ctx.derive(event),
              ...(storedPayload !== undefined ? { storedPayload } : {}),
              ...(storedTexts !== undefined ? { storedTexts } : {}),
            }
          }),
        ),
      ...(ahead ? { ahead } : {}),
    })
  } finally {
    await ahead?.close()
  }
}

/**
 * Worker threads deriving an import's batches (derive-pool.ts), as a rebuild's pages: only on the SQLite store (its
 * writes are synchronous, so the derivations are waited for in place), for files of `DERIVE_POOL_MIN_IMPORT_BYTES`
 * or more, and for the cores idle now (`deriveThreadsNow`). The rows are the same with it as without.
 */
async function openImportPool(ctx: EngineContext, files: readonly string[]): Promise<DerivePool | undefined> {
  if (ctx.store.dialect !== 'sqlite') return undefined
  const { DERIVE_POOL_MIN_IMPORT_BYTES, deriveThreadsNow, openDerivePool } = await import('./derive-pool.js')
  let bytes = 0
  for (const file of files) {
    try {
      bytes += statSync(file).size
    } catch {
      // Unreadable: its parse reports why.
    }
    if (bytes >= DERIVE_POOL_MIN_IMPORT_BYTES) break
  }
  if (bytes < DERIVE_POOL_MIN_IMPORT_BYTES) return undefined
  const threads = await deriveThreadsNow()
  return threads > 0 ? openDerivePool({ timeZone: ctx.timeZone, threads, payloads: true }) : undefined
}
