import type { Clock } from '../core/clock.js'
import { invalidInput, MnemoError } from '../core/errors.js'
import type { EventInput } from '../core/types.js'
import type { Derivation, Store } from '../storage/store.js'
import type { EngineContext } from './engine-context.js'
import { readExport, writeExport } from './export-io.js'

/** What one kind of stored thing counted in the source and in the target after `migrateStore`. */
interface MigratedCount {
  source: number
  target: number
}

/** Outcome of `migrateStore`: per kind, the source's count and the target's after the copy. */
export interface MigrationReport {
  /** Logged events (the source of everything derived). */
  events: MigratedCount
  /** Agents' sessions. */
  sessions: MigratedCount
  observations: MigratedCount
  /** Memories, every version (superseded and archived ones included). */
  memories: MigratedCount
  /** Deleted events' idempotency keys (a re-import never brings them back). */
  tombstones: MigratedCount
  /** Audit log entries; the target holds one more, the record of this copy. */
  audit: MigratedCount
  /** Live records of the typed fact ledger, summed over every project and user. */
  facts: MigratedCount
  /** Events the target already held (only with `force`: a merge). */
  duplicates: number
  /** Whether the target held anything before (only with `force`). */
  merged: boolean
}

type Counts = Record<Exclude<keyof MigrationReport, 'duplicates' | 'merged'>, number>

/** Every count `MigrationReport` compares, of one store; `scopes` are the (project, user) pairs whose facts are counted. */
async function countAll(store: Store, scopes: readonly { projectRoot: string; user: string | null }[]): Promise<Counts> {
  const c = await store.scopeCounts()
  let facts = 0
  for (const scope of scopes) for (const s of (await store.facts.collectionStats(scope, 0)).values()) facts += s.records
  return {
    events: c.events,
    sessions: c.sessions,
    observations: c.observations,
    memories: c.memories,
    tombstones: (await store.tombstones()).length,
    audit: (await store.auditLog(Number.MAX_SAFE_INTEGER)).length,
    facts,
  }
}

/** `MnemoEngine.migrateTo`: `migrateStore` from the source engine's store into the target's, with the target's derivation. */
export function migrateEngine(
  source: EngineContext,
  target: EngineContext,
  options: { targetLabel: string; force?: boolean },
): Promise<MigrationReport> {
  if (!source.access.allUsers) {
    throw new MnemoError('FORBIDDEN', "mnemo migrate copies every user's data: it needs an engine opened for all users", {
      details: { action: 'migrate' },
    })
  }
  return migrateStore(source.store, target.store, source.clock, target.derive, options)
}

/**
 * Copies every user's data from `source` into `target`, losslessly: the event log in order with its receipt times (so
 * every id derives the same), tombstones and the audit log, through mnemo's export format (export-io.ts), in one
 * transaction on the target: a failure stores nothing. Then compares, store against store, the counts of events,
 * sessions, observations, memories with their versions, tombstones, audit entries and fact records.
 *
 * Not carried, as an export carries none of them: vectors (the builtin model refits on the first recall; an embedder's
 * vectors come back with `mnemo reindex`), the days each memory was used, and what was shown to which agent session.
 *
 * @param derive - The target's derivation (the engine's), applied to each event as it is appended.
 * @param options.targetLabel - How messages name the target (a URL without its password, or a file path).
 * @param options.force - Copy into a target that already holds data (a merge: events it holds are skipped, and the
 *   counts are then checked to be at least the source's). Default false.
 * @returns Each kind's count in the source and in the target after the copy.
 * @throws {MnemoError} `INVALID_INPUT` (path `to`) — the target holds data and `force` is not set; nothing is written.
 * @throws {MnemoError} `IMPORT_FAILED` — the target's counts differ from the source's after the copy (the data was
 *   copied; the message names each count that differs).
 * @throws {MnemoError} `STORE_UNAVAILABLE` — either database failed.
 */
async function migrateStore(
  source: Store,
  target: Store,
  clock: Clock,
  derive: (event: EventInput) => Derivation,
  options: { targetLabel: string; force?: boolean },
): Promise<MigrationReport> {
  const label = options.targetLabel
  const held = await target.scopeCounts()
  const heldTombstones = (await target.tombstones()).length
  const heldAudit = (await target.auditLog(1)).length
  const merged = held.events > 0 || heldTombstones > 0 || heldAudit > 0
  if (merged && options.force !== true) {
    throw invalidInput(
      'to',
      `${label} is not empty (${held.events} events, ${held.memories} memories, ${heldTombstones} tombstones, ${heldAudit > 0 ? 'an audit log' : 'no audit log'}): mnemo migrate copies into an empty store`,
      'give an empty database (or a new file), or add --force to merge into it (events it already holds are skipped)',
    )
  }
  const lines: string[] = []
  const scopes = new Map<string, { projectRoot: string; user: string | null }>()
  await writeExport(source, clock, (line) => {
    lines.push(line)
    // The (project, user) pairs of the log: whose facts are counted on both sides.
    if (line.startsWith('{"kind":"event"')) {
      const e = JSON.parse(line) as { project: { root: string }; user?: string }
      const user = e.user ?? null
      scopes.set(`${user ?? ''}\u0000${e.project.root}`, { projectRoot: e.project.root, user })
    }
  })
  const imported = await readExport(target, clock, derive, lines.join('\n'), label)
  const want = await countAll(source, [...scopes.values()])
  const got = await countAll(target, [...scopes.values()])
  // The target's audit log holds one more entry: the record of this import.
  const expected: Counts = { ...want, audit: want.audit + 1 }
  const off = (Object.keys(expected) as (keyof Counts)[]).filter((k) => (merged ? got[k] < expected[k] : got[k] !== expected[k]))
  if (off.length > 0) {
    throw new MnemoError(
      'IMPORT_FAILED',
      `${label}: copied, but ${off.map((k) => `${k} ${got[k]} ≠ ${expected[k]}`).join(', ')} (the source's counts)`,
      {
        details: { file: label, read: imported.events + imported.duplicates, skipped: imported.duplicates },
        hint: 'the data was copied; a source derived by an older mnemo may count differently: run mnemo rebuild on it, then migrate into an empty target again',
      },
    )
  }
  const pair = (k: keyof Counts): MigratedCount => ({ source: want[k], target: got[k] })
  return {
    events: pair('events'),
    sessions: pair('sessions'),
    observations: pair('observations'),
    memories: pair('memories'),
    tombstones: pair('tombstones'),
    audit: pair('audit'),
    facts: pair('facts'),
    duplicates: imported.duplicates,
    merged,
  }
}
