import { readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs'
import { makeDirectory } from './data-dir.js'
import path from 'node:path'
import type { ShownRow } from '../engine/prompt-recall.js'

/**
 * A name's random part: 8 hex digits. It only tells apart two files of one process in one millisecond (the pid tells
 * processes apart; the temp file is renamed, never overwritten), so it needs no cryptographic source — and node:crypto
 * costs the deferred capture ~3 ms CPU to load.
 */
const nameSuffix = (): string =>
  Math.floor(Math.random() * 0x1_0000_0000)
    .toString(16)
    .padStart(8, '0')

/**
 * What a SessionStart event shown a kept block carries in the spool, for the drain to record (`recordContextShown`)
 * after storing the event: as the hook that builds the block records it.
 */
export interface ShownContext {
  /** The `storeMark` the block was checked against. */
  mark: string
  /** The event's session key is in no session of the project (so storing the event adds an empty session). */
  newSession: boolean
  /** `YYYY-MM-DD` (UTC) its memories' use is counted under; epoch ms its rows were shown at. */
  day: string
  at: number
  memoryIds: string[]
  rows: ShownRow[]
}

/** A hook input that could not be stored in time, kept for the next run. */
export interface SpooledEvent {
  /** The hook event name (`PostToolUse`, …). */
  event: string
  /** The raw stdin, exactly as the agent wrote it. */
  stdin: string
  /** The hook's working directory, for payloads without `cwd`. */
  cwd: string
  /** Epoch ms the hook fired: the event's time, kept by every retry (it is part of the key of a payload without an id). */
  spooledAt: number
  /** The agent that sent it (`--agent`); Claude Code when absent. */
  agent?: string
  /** The user the hook captured for (`MNEMO_USER`); absent: none. A drain stores it as that user's, whoever drains. */
  user?: string
  /**
   * Team mode: the first 16 hex digits of the SHA-256 of the token it was to be sent with (`none` when there was no
   * token). Only a hook with the same token sends it, even if the server refused that token; a local drain never
   * stores it.
   */
  tokenId?: string
  /**
   * Set on an event kept in another data directory's `spool/elsewhere/` because its own (`home`) could not take it
   * (full disk, not writable, not a directory): that data directory adopts it once it can be written again.
   */
  home?: string
  /**
   * A SessionStart printed a kept context block without the store (runtime/context-cache.ts): what it showed, which the
   * drain records once the event is stored.
   */
  context?: ShownContext
}

/** Most spooled files one run drains, so a hook stays fast after a long outage. */
const DRAIN_BATCH = 200

/**
 * The spool: one JSON file per event in `dir`, written atomically (temp file
 * then rename), named so that lexical order is arrival order. Draining never
 * loses an event: a file is deleted only after its event was stored (or
 * judged a duplicate), and files that cannot be parsed are moved aside to
 * `dir/bad/` instead of being dropped.
 */
export class Spool {
  constructor(private readonly dir: string) {}

  /** Writes one event to the spool, to be stored by the next drain. Returns its file name. */
  put(item: SpooledEvent): string {
    return this.write(this.dir, item)
  }

  /** Keeps an input that can never be stored (invalid) in `dir/bad/` for inspection; never drained. */
  putBad(item: SpooledEvent): string {
    return this.write(path.join(this.dir, 'bad'), item)
  }

  /**
   * Keeps an event for the data directory `item.home`, which cannot take it now, in `dir/elsewhere/`: that data
   * directory's next drain moves it into its own spool (see `adoptFrom`).
   */
  putForElsewhere(item: SpooledEvent & { home: string }): string {
    return this.write(path.join(this.dir, 'elsewhere'), item)
  }

  /**
   * Moves the events kept for data directory `home` in `other`'s `elsewhere/` folder (see `putForElsewhere`) into this
   * spool, oldest first, so the next drain stores them. One that cannot be moved stays where it is.
   *
   * @returns How many were moved.
   */
  adoptFrom(other: string, home: string): number {
    const dir = path.join(other, 'elsewhere')
    let names: string[]
    try {
      names = readdirSync(dir)
        .filter((f) => f.endsWith('.json') && !f.startsWith('.'))
        .sort()
    } catch {
      return 0
    }
    let moved = 0
    for (const name of names) {
      try {
        const item = JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as SpooledEvent
        if (item.home !== home) continue
        const { home: _for, ...own } = item
        this.write(this.dir, own)
        unlinkSync(path.join(dir, name))
        moved++
      } catch {
        // unreadable, or this spool cannot be written yet: it stays for a later drain
      }
    }
    return moved
  }

  private write(dir: string, item: SpooledEvent): string {
    makeDirectory(dir)
    const name = `${String(item.spooledAt).padStart(15, '0')}-${process.pid}-${nameSuffix()}.json`
    const tmp = path.join(dir, `.${name}.tmp`)
    try {
      writeFileSync(tmp, JSON.stringify(item), { mode: 0o600 })
      renameSync(tmp, path.join(dir, name))
    } catch (error) {
      // A full disk leaves the temp file half written: it is no event, so it goes.
      try {
        unlinkSync(tmp)
      } catch {
        // never created
      }
      throw error
    }
    return name
  }

  /** Spooled files waiting, oldest first. */
  list(): string[] {
    try {
      return readdirSync(this.dir)
        .filter((f) => f.endsWith('.json') && !f.startsWith('.'))
        .sort()
    } catch {
      return []
    }
  }

  count(): number {
    return this.list().length
  }

  /**
   * Feeds up to `limit` spooled events to `store` in arrival order; removes
   * each one `store` accepted, and moves each one it returns `'bad'` for
   * (input that can never be stored) to `dir/bad/`. Stops at the first event
   * `store` throws on (the store is still unavailable) and leaves it and the
   * rest in place.
   *
   * @returns How many were drained and how many remain.
   */
  async drain(
    store: (item: SpooledEvent) => Promise<'stored' | 'bad' | 'skip'>,
    limit = DRAIN_BATCH,
  ): Promise<{ drained: number; remaining: number; failed?: unknown }> {
    const files = this.list()
    let drained = 0
    for (const file of files) {
      // Files left for another drain (skipped) do not count towards the batch.
      if (drained >= limit) break
      const full = path.join(this.dir, file)
      let item: SpooledEvent
      try {
        item = JSON.parse(readFileSync(full, 'utf8')) as SpooledEvent
        if (typeof item.event !== 'string' || typeof item.stdin !== 'string') throw new Error('not a spooled event')
      } catch {
        this.moveAside(file)
        continue
      }
      try {
        const outcome = await store(item)
        // Not this drain's to store (a team-mode event waiting for its token): it stays, in order.
        if (outcome === 'skip') continue
        if (outcome === 'bad') {
          this.moveAside(file)
          drained++
          continue
        }
      } catch (failed) {
        return { drained, remaining: files.length - drained, failed }
      }
      try {
        unlinkSync(full)
      } catch {
        // another process drained it first; the store deduplicated it
      }
      drained++
    }
    return { drained, remaining: files.length - drained }
  }

  /** Spooled inputs that could never be stored, kept for inspection. */
  badCount(): number {
    try {
      return readdirSync(path.join(this.dir, 'bad')).length
    } catch {
      return 0
    }
  }

  /** One spooled event by file name, or undefined when it is gone or unreadable (then it is moved aside). */
  read(file: string): SpooledEvent | undefined {
    try {
      const item = JSON.parse(readFileSync(path.join(this.dir, file), 'utf8')) as SpooledEvent
      if (typeof item.event === 'string' && typeof item.stdin === 'string') return item
    } catch {
      // fall through
    }
    this.moveAside(file)
    return undefined
  }

  /** Deletes a spooled event once it has been stored elsewhere. */
  remove(file: string): void {
    try {
      unlinkSync(path.join(this.dir, file))
    } catch {
      // another process drained it first
    }
  }

  /** Moves a spooled event that can never be stored to `dir/bad/`. */
  moveAside(file: string): void {
    try {
      makeDirectory(path.join(this.dir, 'bad'))
      renameSync(path.join(this.dir, file), path.join(this.dir, 'bad', file))
    } catch {
      // another process drained it first
    }
  }
}
