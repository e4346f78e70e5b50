import { readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { captureClaudeHook } from '../capture/claude-hook.js'
import { resolveProjectRoot } from '../capture/project.js'
import { redactSecrets } from '../capture/redact.js'
import { toMnemoEvent } from '../core/hook-events.js'
import { toHookAgent, type ProjectRef } from '../core/types.js'
import { defaultDataDir, resolveConfig, type MnemoEnv, type ResolvedConfig } from '../config/config.js'
import type { ContextListing } from '../engine/reads.js'
import type { ShownRow } from '../engine/prompt-recall.js'
import { type ShownContext, Spool, type SpooledEvent } from './spool.js'

export type { ShownContext }

// A kept context block: the SessionStart block of one project, written beside the store by a hook that built it, and
// printed by the next SessionStart hook without opening the store while nothing it depends on has changed (the
// database file, the settings, the build, the spool). docs/STARTUP.md has the figures.

/** The kept block's file in the data directory. */
const CONTEXT_CACHE_FILE = 'context-cache.json'
/** The file's format; another value is not read. */
const FORMAT = 1

/** The kept block as its file holds it. */
interface KeptContext {
  format: number
  /** `buildOf` of the mnemo that wrote it. */
  build: string
  /** `contextSettings` it was built with. */
  settings: string
  /** `storeMark` of the database file it was built from. */
  mark: string
  project: ProjectRef
  /** The block as built; `generated` is the header's time in it, replaced by the time it is shown. */
  text: string
  generated: string
  /** What showing it records: its memories' use, and the rows a session is then known to have seen. */
  memoryIds: string[]
  rows: ShownRow[]
  /** `ContextListing.listedKeys` and `.slack`. */
  listed: string[]
  slack: number
  /**
   * `keyHash` of the session key of every session of the project, each between commas (a session of another project
   * with the same key is not this project's: the agent's next event there makes a new, empty session here).
   */
  known: string
}

/**
 * The build a kept block belongs to: the modification time of `file` (an entry point of the build, ms), which every
 * build and every install rewrites.
 */
export function buildOf(file: string): string {
  return String(statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0)
}

/** The settings a block depends on, as one string: data directory, budget, time zone, user, agent scope, agent. */
export function contextSettings(config: ResolvedConfig, agent: string): string {
  return JSON.stringify([config.dbPath, config.contextBudgetTokens, config.timeZone, config.user ?? null, config.agentScope, agent])
}

/**
 * The database file's state, when the file alone holds the store (no WAL, or an empty one): device, inode, size,
 * modification and change times (ns). Any commit changes it: a commit goes to the WAL first, and only a checkpoint, which
 * writes the file, empties the WAL again. Undefined when the WAL holds frames or the file is missing.
 */
function storeMark(dbPath: string): string | undefined {
  // The WAL first: a write that lands between the two readings has changed the file by the time it is read.
  const wal = statSync(`${dbPath}-wal`, { throwIfNoEntry: false, bigint: true })
  if (wal !== undefined && wal.size !== 0n) return undefined
  const db = statSync(dbPath, { throwIfNoEntry: false, bigint: true })
  return db === undefined ? undefined : `${db.dev}:${db.ino}:${db.size}:${db.mtimeNs}:${db.ctimeNs}`
}

/** What `keepContext` needs of the store (a SQLite store has it: `Store.otherWrites`, `settle`, `sessionKeys`). */
export interface KeepingStore {
  otherWrites(): number
  settle(): string | undefined
  sessionKeys(projectRoot: string): Promise<string[]>
}

/**
 * Keeps `block` (built with `withListing`, with nothing written since `since` by other connections) for the next
 * SessionStart of `project`: checkpoints the store so the database file alone holds it, and writes the block with the
 * file's `storeMark` beside it (temp file, then rename). Keeps nothing — and returns false — when the block cannot be
 * shown twice (it shows uncertain facts, or leaving out the asking session changed it), the project is not in the
 * store, the checkpoint cannot finish, or another connection committed since `since`.
 *
 * @param since - `store.otherWrites()` read before the block's first read.
 */
export async function keepContext(
  store: KeepingStore,
  input: {
    home: string
    dbPath: string
    build: string
    settings: string
    since: number
    project: ProjectRef
    block: { text: string; memoryIds: readonly string[]; shown?: readonly ShownRow[]; listing?: ContextListing }
  },
): Promise<boolean> {
  const { block, project } = input
  const listing = block.listing
  if (listing === undefined || !listing.known || listing.uncertain || listing.excludedListed) return false
  const generated = /^<mnemo-context [^>]*generated="([^"]+)">/.exec(block.text)?.[1] ?? ''
  if (block.text !== '' && generated === '') return false
  const keys = await store.sessionKeys(project.root)
  if (store.settle() !== input.dbPath) return false
  const mark = storeMark(input.dbPath)
  // A commit of another connection since the block's first read: the block may not be the store's any more.
  if (mark === undefined || store.otherWrites() !== input.since) return false
  const kept: KeptContext = {
    format: FORMAT,
    build: input.build,
    settings: input.settings,
    mark,
    project: { root: project.root, name: project.name },
    text: block.text,
    generated,
    memoryIds: [...block.memoryIds],
    rows: [...(block.shown ?? [])],
    listed: listing.listedKeys,
    slack: listing.slack,
    known: `,${keys.map(keyHash).join(',')},`,
  }
  const file = path.join(input.home, CONTEXT_CACHE_FILE)
  const tmp = `${file}.${process.pid}.tmp`
  try {
    writeFileSync(tmp, JSON.stringify(kept), { mode: 0o600 })
    renameSync(tmp, file)
  } catch {
    try {
      unlinkSync(tmp)
    } catch {
      // never written
    }
    return false
  }
  return true
}

/**
 * SessionStart from the kept block: when the block kept beside the store (`keepContext`) is still the one the full
 * hook would build, spools the event with what the block shows (`ShownContext`: the drain stores the event and records
 * the block as the full hook would) and prints the block with the time of now in its header, without loading the
 * engine or SQLite. The block is the full hook's when all of these hold (else nothing is done):
 * local mode, a known agent, the event is SessionStart (the agent's name mapped), its payload is stored as it is (no
 * string cut, no other event name), the build, the settings and the project (root and name) are the block's, the
 * database file is as it was when the block was built (`storeMark`), the session is not among those the block listed,
 * every event waiting in the spool is a SessionStart shown this block for a session new to the project, and the block
 * still holds once the sessions of those events and of this one join the list (`ContextListing.slack`).
 *
 * @param io.build - `buildOf` of this mnemo. `io.firedAt` - when the hook fired, epoch ms (the event's time).
 * @returns The spool file of the event when the hook is done (the event spooled, the block printed); else undefined.
 * @throws Whatever reading the files throws: the caller then runs the full hook.
 */
export function serveKeptContext(
  eventName: string,
  agentName: string,
  read: { text: string; cutStrings: number },
  io: { env: MnemoEnv; cwd: string; stdout: { write(text: string): unknown }; build: string; firedAt: number },
): string | undefined {
  const agent = toHookAgent(agentName)
  // The full hook prints a block for the event named SessionStart (an agent's other names for it get none).
  if (
    io.env['MNEMO_SERVER_URL'] ||
    agent !== agentName ||
    read.cutStrings > 0 ||
    eventName !== 'SessionStart' ||
    toMnemoEvent(agent, eventName) !== 'SessionStart'
  )
    return undefined
  const config = resolveConfig(io.env)
  let kept: KeptContext
  try {
    kept = JSON.parse(readFileSync(path.join(config.home, CONTEXT_CACHE_FILE), 'utf8')) as KeptContext
  } catch {
    return undefined
  }
  if (kept.format !== FORMAT || kept.build !== io.build || kept.settings !== contextSettings(config, agent)) return undefined
  // Stored as the spool holds it: redacted (the drain stores exactly this text).
  const stdin = redactSecrets(read.text)
  // Only its project and session are read here: the text is redacted already (redacting it again changes nothing).
  const captured = captureClaudeHook(eventName, stdin, io.firedAt, {
    agent,
    redact: (text) => text,
    resolveProject: resolveProjectRoot,
    defaultCwd: io.cwd,
  })
  if ('skip' in captured || captured.note !== undefined || captured.event.type !== 'SessionStart') return undefined
  const { project, sessionKey } = captured.event
  if (project.root !== kept.project.root || project.name !== kept.project.name || kept.listed.includes(sessionKey)) return undefined
  if (storeMark(config.dbPath) !== kept.mark) return undefined
  const waiting = waitingShown(new Spool(config.spoolDir), config.spoolDir, kept.mark)
  if (waiting === undefined || waiting + 1 > kept.slack) return undefined
  // Events kept for this data directory in the default one are adopted by the next drain: they may change the block.
  const fallback = defaultDataDir(io.env)
  if (fallback.home !== config.home && keptElsewhere(fallback.spoolDir)) return undefined
  // The engine's clock (systemClock), as in the block the full hook builds.
  const now = Date.now()
  const generated = new Date(now).toISOString()
  if (generated.length !== kept.generated.length && kept.text !== '') return undefined
  const text = kept.text.replace(`generated="${kept.generated}">`, `generated="${generated}">`)
  const shown: ShownContext = {
    mark: kept.mark,
    newSession: !kept.known.includes(`,${keyHash(sessionKey)},`),
    day: new Date(now).toISOString().slice(0, 10),
    at: now,
    memoryIds: kept.text === '' ? [] : kept.memoryIds,
    rows: kept.text === '' ? [] : kept.rows,
  }
  const user = io.env['MNEMO_USER'] ? { user: io.env['MNEMO_USER'] } : {}
  const spool = new Spool(config.spoolDir)
  const item: SpooledEvent = { event: eventName, stdin, cwd: io.cwd, spooledAt: io.firedAt, agent, ...user }
  const file = spool.put({ ...item, context: shown })
  if (text === '') return file
  try {
    io.stdout.write(`${JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: text } })}\n`)
  } catch {
    // Not printed, so not shown: the event is stored without the record.
    const again = spool.put(item)
    spool.remove(file)
    return again
  }
  return file
}

/**
 * A session key's 32-bit FNV-1a hash, base 36: two keys may share one (a new session is then taken for a known one,
 * which only costs a later SessionStart its shortcut), one key always has the same.
 */
function keyHash(key: string): string {
  let h = 0x811c9dc5
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193)
  return (h >>> 0).toString(36)
}

/** Whether `spoolDir/elsewhere/` holds a file (an event kept for another data directory). */
function keptElsewhere(spoolDir: string): boolean {
  try {
    return readdirSync(path.join(spoolDir, 'elsewhere')).length > 0
  } catch {
    return false
  }
}

/**
 * How many events wait in the spool, when every one is a SessionStart shown the block of `mark` for a new session;
 * undefined when another event waits (its drain may change the block).
 */
function waitingShown(spool: Spool, dir: string, mark: string): number | undefined {
  let count = 0
  for (const file of spool.list()) {
    let item: SpooledEvent
    try {
      item = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as SpooledEvent
    } catch {
      // drained meanwhile: stored by then, so the database file has changed (checked again by the drain's reader)
      return undefined
    }
    if (item.context?.mark !== mark || item.context.newSession !== true) return undefined
    count++
  }
  return count
}
