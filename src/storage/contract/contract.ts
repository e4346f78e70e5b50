import { afterEach, beforeEach, describe } from 'vitest'
import { type MemoryOpName, memoryOpEvent, rememberEvent } from '../../capture/mnemo-ops.js'
import { createManualClock } from '../../core/clock.js'
import { makeId } from '../../core/ids.js'
import type { AgentName, EventInput, MemoryKind, ProjectRef } from '../../core/types.js'
import { ownEvent } from '../../core/user.js'
import { indexEvent } from '../../engine/index-event.js'
import { MnemoEngine } from '../../engine/mnemo.js'
import type { AppendResult, Store } from '../store.js'
import { type ContractDatabase, type ContractDialect, DIALECTS } from './dialects.js'

// The store contract: what every dialect's `Store` must do, tested the same way on each (Kysely's habit of looping
// its tests over real databases). Events go through the engine's own derivation (`indexEvent`), so the rows under test
// are the rows a capture writes; where a behaviour is the engine's (export, import, recall "as of"), a `MnemoEngine`
// runs over the store under test.

/** 2025-06-14T10:00:00Z: the start of every test clock. */
export const T0 = Date.parse('2025-06-14T10:00:00Z')
/** The zone dates are indexed in. */
export const TIME_ZONE = 'UTC'
export const MINUTE = 60_000
export const HOUR = 60 * MINUTE
export const DAY = 24 * HOUR

export const ALPHA: ProjectRef = { root: '/p/alpha', name: 'alpha' }
export const BETA: ProjectRef = { root: '/p/beta', name: 'beta' }

export type ManualClock = ReturnType<typeof createManualClock>

/** What one contract test gets: an empty database of the dialect, a store on it and the clock the store reads. */
interface ContractContext {
  dialect: ContractDialect
  db: ContractDatabase
  store: Store
  clock: ManualClock
}

/**
 * Declares the tests `body` registers once per dialect of `DIALECTS`, each test on an empty database. A dialect
 * that cannot run here (no PostgreSQL server) is skipped with its reason in the suite's name.
 */
export function describeContract(title: string, body: (t: () => ContractContext) => void): void {
  for (const dialect of DIALECTS) {
    const name = dialect.skip
      ? `${dialect.name} store contract: ${title} (skipped: ${dialect.skip})`
      : `${dialect.name} store contract: ${title}`
    describe.skipIf(dialect.skip !== undefined)(name, () => {
      let ctx: ContractContext | undefined
      beforeEach(async () => {
        const clock = createManualClock(T0)
        const db = await dialect.create()
        ctx = { dialect, db, clock, store: await db.open(() => clock.now()) }
      })
      afterEach(async () => {
        await ctx?.db.close()
        ctx = undefined
      })
      body(() => {
        if (!ctx) throw new Error('the contract context exists only inside a test')
        return ctx
      })
    })
  }
}

/** Where an event comes from: its project, agent session and user (omitted: shared). */
interface EventOrigin {
  project?: ProjectRef
  session?: string
  agent?: AgentName
  user?: string
  ts?: number
}

/** Its user's copy of an event (idempotency key in the user's namespace), as the engine writes a user's capture. */
function owned(event: EventInput, user: string | undefined): EventInput {
  return user === undefined ? event : ownEvent(event, user)
}

/** A Claude Code `UserPromptSubmit` hook event: one `prompt` observation. */
export function promptEvent(key: string, prompt: string, origin: EventOrigin = {}): EventInput {
  const project = origin.project ?? ALPHA
  const session = origin.session ?? 's1'
  return owned(
    {
      agent: origin.agent ?? 'claude-code',
      format: 'claude-hook',
      type: 'UserPromptSubmit',
      sessionKey: session,
      project,
      ts: origin.ts ?? T0,
      idemKey: key,
      payload: { session_id: session, cwd: project.root, hook_event_name: 'UserPromptSubmit', prompt },
    },
    origin.user,
  )
}

/** A Claude Code `PostToolUse` hook event of an `Edit` on `file` (relative to the project): one `tool` observation naming the file. */
export function editEvent(key: string, file: string, newText: string, origin: EventOrigin = {}): EventInput {
  const project = origin.project ?? ALPHA
  const session = origin.session ?? 's1'
  return owned(
    {
      agent: origin.agent ?? 'claude-code',
      format: 'claude-hook',
      type: 'PostToolUse',
      sessionKey: session,
      project,
      ts: origin.ts ?? T0,
      idemKey: key,
      payload: {
        session_id: session,
        cwd: project.root,
        hook_event_name: 'PostToolUse',
        tool_name: 'Edit',
        tool_use_id: `tu-${key}`,
        tool_input: { file_path: `${project.root}/${file}`, old_string: '', new_string: newText },
        tool_response: { success: true },
      },
    },
    origin.user,
  )
}

/** The `remember` event the engine logs for an explicit memory. */
export function memoryEvent(
  text: string,
  origin: EventOrigin & { kind?: MemoryKind; supersedes?: string; memoryAgent?: AgentName } = {},
): EventInput {
  return rememberEvent(origin.project ?? ALPHA, origin.kind ?? 'fact', text, origin.ts ?? T0, {
    ...(origin.user !== undefined ? { user: origin.user } : {}),
    ...(origin.supersedes !== undefined ? { supersedes: origin.supersedes } : {}),
    ...(origin.memoryAgent !== undefined ? { agent: origin.memoryAgent } : {}),
  })
}

/** A pin, unpin, archive or restore of a memory, as the engine logs it. */
export function memoryOp(op: MemoryOpName, id: string, origin: EventOrigin = {}): EventInput {
  return memoryOpEvent(origin.project ?? ALPHA, op, id, origin.ts ?? T0, origin.user)
}

/** Appends events as the engine does: each with its derivation by `indexEvent`, in one batch. */
export function appendEvents(store: Store, events: readonly EventInput[]): Promise<AppendResult> {
  return store.append(events.map((event) => ({ event, derive: () => indexEvent(event, TIME_ZONE) })))
}

/** The id of the `index`-th observation an event derives (ids follow from the event, so a rebuild or another dialect gives the same). */
export function observationId(event: EventInput, index = 0): string {
  return makeId('obs', event.ts, `${event.idemKey}#${index}`)
}

/** The id of the memory a `remember` event derives. */
export function memoryId(event: EventInput): string {
  return makeId('mem', event.ts, event.idemKey)
}

/** The observation or memory ids of documents, in the order given. */
export async function idsOf(store: Store, docKeys: readonly number[]): Promise<string[]> {
  return (await store.docs(docKeys)).map((d) => d.id)
}

/** An engine over a contract store, as a CLI or server builds it (clock, zone and working directory fixed). */
export function engineOver(store: Store, clock: ManualClock, scope: { user?: string; allUsers?: boolean } = {}): MnemoEngine {
  return new MnemoEngine({
    store,
    clock,
    cwd: ALPHA.root,
    contextBudgetTokens: 2000,
    timeZone: TIME_ZONE,
    ...(scope.user !== undefined ? { user: scope.user } : {}),
    ...(scope.allUsers ? { allUsers: true } : {}),
  })
}
