import { idPrefix } from '../core/ids.js'
import { MnemoError } from '../core/errors.js'
import { checkUserName, ownEvent } from '../core/user.js'
import type { AgentName, EventInput } from '../core/types.js'
import type { Scope } from '../storage/store.js'
import type { EngineDeps } from './engine-context.js'

/**
 * Whose rows an engine reads and may change (see `EngineDeps`): its user,
 * its agent under agent isolation, and the all-users switch of a person at
 * the CLI. `who` is the condition every store read takes; `sees`, `owns`
 * and `assertOwn` check one row a caller named by id.
 */
export class Access {
  constructor(
    /** The user it writes and reads for; undefined: no user (writes are shared, reads see shared rows only). */
    readonly user: string | undefined,
    /** The agent it reads for; applies under `agentScope: 'own'` only. */
    readonly agent: AgentName | undefined,
    readonly agentScope: 'shared' | 'own',
    /** Read every user's rows (`--all-users`). */
    readonly allUsers: boolean,
  ) {}

  /**
   * Whose rows it reads (see `Scope`): its user's and shared ones (shared
   * ones only without a user), or every user's with `allUsers`; and under
   * agent isolation its agent's and agent-less ones.
   */
  who(): Omit<Scope, 'projectIds'> {
    return {
      ...(this.allUsers ? {} : { user: this.user ?? null }),
      ...(this.agentScope === 'own' && this.agent !== undefined ? { agent: this.agent } : {}),
    }
  }

  /**
   * True when a row (observation, memory, session) is in scope: `show` and friends answer NOT_FOUND otherwise.
   *
   * @param rowAgent - The row's agent when the row does not carry it (an observation's session's agent).
   */
  sees(row: { user?: string; agent?: AgentName }, rowAgent?: AgentName): boolean {
    const who = this.who()
    if (who.user !== undefined && row.user !== undefined && row.user !== who.user) return false
    const agent = rowAgent ?? row.agent
    return who.agent === undefined || agent === undefined || agent === who.agent
  }

  /** True when it may change or delete a row: in scope and its own user's (a shared row is changed by a reader with no user, or with `allUsers`). */
  owns(row: { user?: string; agent?: AgentName }): boolean {
    return this.sees(row) && (this.allUsers || row.user === this.user)
  }

  /** @throws {MnemoError} `CONFLICT` — a row it does not own (see `owns`): a shared one seen by a reader with a user. */
  assertOwn(row: { id: string; user?: string }): void {
    if (this.owns(row)) return
    throw new MnemoError(
      'CONFLICT',
      `${row.id} is shared (captured with no user): ${this.user ? `user ${this.user}` : 'this user'} cannot change it; only a reader with no user, or one reading every user's data, can`,
      {
        details: { kind: idPrefix(row.id) === 'obs' ? 'observation' : 'memory', id: row.id },
      },
    )
  }

  /** Events captured for it carry its user (and a key namespaced by it: see `ownEvent`). */
  own(events: readonly EventInput[]): EventInput[] {
    return this.user === undefined ? [...events] : events.map((e) => ownEvent(e, this.user))
  }
}

/**
 * `MnemoEngine.scoped`: the same settings for another user or agent, or with the all-users switch; fields `scope`
 * leaves out keep the values of `deps`.
 *
 * @throws {MnemoError} `INVALID_INPUT` — a malformed user name.
 */
export function scopedDeps(
  deps: EngineDeps,
  scope: { user?: string | undefined; agent?: AgentName | undefined; allUsers?: boolean },
): EngineDeps {
  if (scope.user !== undefined) checkUserName(scope.user)
  const { user, agent, allUsers, ...rest } = deps
  const next = {
    user: 'user' in scope ? scope.user : user,
    agent: 'agent' in scope ? scope.agent : agent,
    allUsers: scope.allUsers ?? allUsers,
  }
  return {
    ...rest,
    ...(next.user !== undefined ? { user: next.user } : {}),
    ...(next.agent !== undefined ? { agent: next.agent } : {}),
    ...(next.allUsers ? { allUsers: true } : {}),
  }
}
