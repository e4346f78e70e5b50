import { appendFileSync, readFileSync, renameSync, statSync } from 'node:fs'
import { makeDirectory } from './data-dir.js'
import path from 'node:path'

/** One failure recorded by a hook or a background task. */
interface ErrorRecord {
  /** ISO-8601 time. */
  at: string
  /** Where it happened: `hook PostToolUse`, `spool drain`, … */
  where: string
  code: string
  message: string
  /** What to do about it, when the error carried a hint (e.g. the repair of a damaged database). */
  hint?: string
}

/** Size past which the log is rotated to `<file>.1` (1 MiB). */
const ERROR_LOG_MAX_BYTES = 1024 * 1024

/**
 * An append-only JSONL failure log with a size limit (one rotation kept), read
 * by `mnemo status`. Writing never throws: a failure to log must not break the
 * hook that is logging.
 */
export class ErrorLog {
  constructor(private readonly file: string) {}

  append(record: ErrorRecord): void {
    try {
      makeDirectory(path.dirname(this.file))
      try {
        if (statSync(this.file).size > ERROR_LOG_MAX_BYTES) renameSync(this.file, `${this.file}.1`)
      } catch {
        // no log yet
      }
      appendFileSync(this.file, `${JSON.stringify(record)}\n`, { mode: 0o600 })
    } catch {
      // nowhere left to report to
    }
  }

  /** The last `n` records, oldest first; unreadable lines are skipped. */
  tail(n: number): ErrorRecord[] {
    let text: string
    try {
      text = readFileSync(this.file, 'utf8')
    } catch {
      return []
    }
    const out: ErrorRecord[] = []
    for (const line of text.split('\n').slice(-n - 1)) {
      if (line.trim().length === 0) continue
      try {
        out.push(JSON.parse(line) as ErrorRecord)
      } catch {
        // a torn line from a crash mid-write
      }
    }
    return out.slice(-n)
  }
}
