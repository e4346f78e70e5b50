import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { invalidInput, MnemoError } from '../core/errors.js'
import type { ProjectRef } from '../core/types.js'
import { parseClaudeTranscript } from '../capture/claude-transcript.js'
import { parseCodexRollout } from '../capture/codex-rollout.js'
import type { ParseResult } from '../capture/derivation.js'
import { isGeminiSession, parseGeminiSession } from '../capture/gemini-session.js'
import { isLocomo, parseLocomo } from '../capture/locomo.js'
import type { Redactor } from '../capture/sanitize.js'
import { detectTranscriptFormat } from '../capture/transcript-format.js'

export type ImportFormat = 'auto' | 'claude-code' | 'codex' | 'gemini' | 'locomo' | 'mnemo'
export const IMPORT_FORMATS: readonly ImportFormat[] = ['auto', 'claude-code', 'codex', 'gemini', 'locomo', 'mnemo']

/** Largest file `import` reads, in bytes (512 MiB). */
export const MAX_IMPORT_FILE_BYTES = 512 * 1024 * 1024

/** One file's parse, before anything is stored. */
export interface ParsedFile {
  file: string
  format: Exclude<ImportFormat, 'auto' | 'mnemo'> | undefined
  parse: ParseResult
  /** Why the file could not be read at all (then `parse` is empty). */
  error?: string
}

/**
 * Lists the files an import of `target` reads: the file itself, or every
 * `.jsonl` and `.json` file under a folder (recursively, sorted, skipping
 * dot-folders and `node_modules`).
 *
 * @throws {MnemoError} `NOT_FOUND` — `target` does not exist.
 */
export function listImportFiles(target: string): string[] {
  let st
  try {
    st = statSync(target)
  } catch {
    throw new MnemoError('NOT_FOUND', `no file or folder at ${target}`, { details: { kind: 'file', id: target } })
  }
  if (st.isFile()) return [target]
  const out: string[] = []
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) {
        if (!entry.name.startsWith('.') && entry.name !== 'node_modules') walk(full)
      } else if (entry.isFile() && /\.(jsonl|json)$/i.test(entry.name)) out.push(full)
    }
  }
  walk(target)
  return out
}

/**
 * Reads and parses one file in the given format (`auto` sniffs it: a JSON
 * array of conversations is LoCoMo, a JSON object with `sessionId` and
 * `messages` a Gemini CLI session; JSONL is told apart by its record types).
 * Never throws for content problems: they come back in `error` or as skipped
 * lines. `candidateRoots` are the folders a Gemini session's `projectHash`
 * is matched against (default: the process cwd).
 */
export function parseImportFile(file: string, format: ImportFormat, options: { redact?: Redactor; project?: ProjectRef; candidateRoots?: readonly string[] }): ParsedFile {
  const empty: ParseResult = { events: [], read: 0, skipped: [], unknownTypes: {} }
  let text: string
  try {
    if (statSync(file).size > MAX_IMPORT_FILE_BYTES) return { file, format: undefined, parse: empty, error: `file is larger than ${MAX_IMPORT_FILE_BYTES} bytes` }
    // A UTF-8 byte-order mark is not content (editors on Windows add it).
    text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '')
  } catch (cause) {
    return { file, format: undefined, parse: empty, error: `cannot read file: ${(cause as Error).message}` }
  }
  if (format === 'mnemo') return { file, format: undefined, parse: empty, error: 'a mnemo export must be imported on its own, not inside a folder' }
  let resolved: Exclude<ImportFormat, 'auto' | 'mnemo'> | undefined = format === 'auto' ? undefined : format
  let json: unknown
  if (resolved === undefined || resolved === 'locomo') {
    const trimmed = text.trimStart()
    if (trimmed.startsWith('[')) {
      try {
        json = JSON.parse(text)
        if (resolved === undefined && isLocomo(json)) resolved = 'locomo'
        else if (resolved === undefined && isGeminiPromptLog(json)) {
          return { file, format: undefined, parse: empty, error: "Gemini CLI's prompt log (logs.json), not a session: nothing to import (the sessions are in chats/)" }
        }
      } catch (cause) {
        if (resolved === 'locomo') return { file, format: 'locomo', parse: empty, error: `invalid JSON: ${(cause as Error).message}` }
      }
    } else if (resolved === 'locomo') return { file, format: 'locomo', parse: empty, error: 'LoCoMo data must be a JSON array' }
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
          const hint = kind ? ` (it looks like ${kind === 'codex' ? 'Codex rollout' : 'Claude Code'} JSONL: try --format auto)` : named ? ' (a truncated Gemini CLI session?)' : ''
          if (resolved === 'gemini' || !kind) return { file, format: 'gemini', parse: empty, error: `invalid JSON: ${(cause as Error).message}${hint}` }
        }
        // JSONL starts with '{' too: detected below
      }
    } else if (resolved === 'gemini') return { file, format: 'gemini', parse: empty, error: 'a Gemini CLI session must be a JSON object' }
  }
  resolved ??= detectTranscriptFormat(text)
  if (resolved === undefined) {
    return { file, format: undefined, parse: empty, error: 'unrecognised format (not Claude Code JSONL, Codex rollout JSONL, Gemini CLI session JSON or LoCoMo JSON); pass --format' }
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
      return { file, format: resolved, parse: parseGeminiSession(json, options.candidateRoots ? { ...opts, candidateRoots: options.candidateRoots } : opts) }
  }
}

/** Gemini CLI's per-project `logs.json`: an array of `{sessionId, messageId, type, message, timestamp}`, the user's prompts only. */
function isGeminiPromptLog(json: unknown): boolean {
  if (!Array.isArray(json) || json.length === 0) return false
  const first = json[0] as Record<string, unknown> | null
  return typeof first === 'object' && first !== null && typeof first['sessionId'] === 'string' && 'messageId' in first && typeof first['message'] === 'string'
}

/** Validates a `--format` value. */
export function toImportFormat(value: string | undefined): ImportFormat {
  if (value === undefined) return 'auto'
  if ((IMPORT_FORMATS as readonly string[]).includes(value)) return value as ImportFormat
  throw invalidInput('format', `--format must be one of ${IMPORT_FORMATS.join(', ')} (got ${JSON.stringify(value)})`)
}
