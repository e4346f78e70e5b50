import { invalidInput, MnemoError } from '../core/errors.js'
import type { CollectionSpec, FactRecord } from '../core/facts/fact-types.js'
import type { ProjectRef } from '../core/types.js'
import type { EngineFacts } from './facts.js'

/**
 * Dependent facts (docs/FACTS.md "Dependent facts"): entity-attribute facts with stable keys (`team_lead`), and
 * dependency rules as records, propagated at write time. A change of a source runs its rules breadth first (a cycle
 * guard; chains of any depth): `set` gives the target the rule's declared value, `uncertain` marks it unknown now;
 * either way the target's own dependants are visited too. Every derived change is a logged fact write with its
 * reason, so queries, rebuild and export see the result without reasoning at query time.
 */

/** The collection of entity-attribute facts: one record per key, its versions the key's history. */
const STATE_COLLECTION: CollectionSpec = {
  name: 'entity_state',
  description: 'Entity-attribute facts by stable key (team_lead), with how sure mnemo is of each and why it changed.',
  fields: [
    { name: 'key', type: 'string' },
    { name: 'value', type: 'string' },
    { name: 'certainty', type: 'enum', values: ['known', 'uncertain'] },
    { name: 'because', type: 'string' },
    { name: 'changed_at', type: 'datetime' },
  ],
  identity: ['key'],
  timeField: 'changed_at',
}

/** The collection of dependency rules: what happens to `target` when `source` changes. */
const RULE_COLLECTION: CollectionSpec = {
  name: 'dependency_rules',
  description: 'When a source fact changes, a target fact takes a declared value (set) or becomes unknown (uncertain).',
  fields: [
    { name: 'source', type: 'string' },
    { name: 'target', type: 'string' },
    { name: 'effect', type: 'enum', values: ['set', 'uncertain'] },
    { name: 'value', type: 'string' },
    { name: 'stated', type: 'string' },
  ],
  identity: ['source', 'target'],
}

/**
 * Which uncertain facts a context block has already shown: one record per key, with the `changed_at` of the
 * uncertain version it showed, so each uncertain version is surfaced once.
 */
const NOTICE_COLLECTION: CollectionSpec = {
  name: 'context_notices',
  description: 'Uncertain facts a context block has already shown (each uncertain version once).',
  fields: [
    { name: 'key', type: 'string' },
    { name: 'changed_at', type: 'datetime' },
  ],
  identity: ['key'],
  timeField: 'changed_at',
}

/** The collections this module writes itself (through `set`, `addRule`, `noteSurfaced`): no other writer may, so rules always run. */
export const DEPENDENCY_COLLECTIONS: readonly string[] = [STATE_COLLECTION.name, RULE_COLLECTION.name, NOTICE_COLLECTION.name]

/** An uncertain dependant a context block has not shown yet, with its line. */
interface UncertainNotice {
  key: string
  /** When it became uncertain (ISO 8601, the state record's `changed_at`). */
  changedAt: string
  /** `Uncertain: <key> was <value>, but it depended on <source>, which changed to <v> on <day>` */
  text: string
}

/** A fact that depends on another through the rules, with how sure mnemo is of it now. */
interface Dependant {
  key: string
  /** The key whose rule names it: the key asked about, or one of its dependants (chains are followed). */
  via: string
  /** What the rule does when `via` changes. */
  effect: 'set' | 'uncertain'
  /** `uncertain` when something it depended on changed and nobody has confirmed or re-resolved it since. */
  status: StateAnswer['status']
  value: string | null
  text: string
}

/** Most dependants listed for one key (a breadth-first walk of its rules). */
const MAX_DEPENDANTS = 200

/** How a key's current answer reads (deterministic), with what it rests on. */
export interface StateAnswer {
  key: string
  status: 'current' | 'changed' | 'uncertain' | 'deleted' | 'unknown'
  /** The current value (`current`, `changed`), the last known one (`uncertain`), or null. */
  value: string | null
  /** Every value the key had, oldest first (deleted keys: none). */
  history: string[]
  text: string
  record?: string
}

/** One change a write made, the stated one first, then what its rules derived, breadth first. */
interface StateChange {
  key: string
  before: string | null
  after: string | null
  certainty: 'known' | 'uncertain'
  because?: string
}

const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/** The dependent-facts use cases over the fact ledger of one engine. */
export class FactDependencies {
  constructor(
    private readonly facts: EngineFacts,
    private readonly now: () => number,
  ) {}

  private async ensure(project: ProjectRef | undefined): Promise<void> {
    const where = project ? { project } : {}
    if ((await this.facts.collection(STATE_COLLECTION.name, where)) === undefined) await this.facts.declare(STATE_COLLECTION, where)
    if ((await this.facts.collection(RULE_COLLECTION.name, where)) === undefined) await this.facts.declare(RULE_COLLECTION, where)
  }

  private async current(key: string, project: ProjectRef | undefined): Promise<FactRecord | undefined> {
    if ((await this.facts.collection(STATE_COLLECTION.name, project ? { project } : {})) === undefined) return undefined
    const a = await this.facts.query(
      {
        collection: STATE_COLLECTION.name,
        status: 'any',
        where: { field: 'key', op: '=', value: { kind: 'string', value: key } },
        verb: { verb: 'list', fields: [], limit: 1 },
      },
      project ? { project } : {},
    )
    const id = a.records[0]
    if (id === undefined) return undefined
    const shown = await this.facts.show(id, project ? { project } : {})
    return 'record' in shown ? shown.record : undefined
  }

  private async rulesFrom(
    key: string,
    project: ProjectRef | undefined,
  ): Promise<{ target: string; effect: 'set' | 'uncertain'; value: string | null }[]> {
    if ((await this.facts.collection(RULE_COLLECTION.name, project ? { project } : {})) === undefined) return []
    const a = await this.facts.query(
      {
        collection: RULE_COLLECTION.name,
        where: { field: 'source', op: '=', value: { kind: 'string', value: key } },
        verb: { verb: 'list', fields: ['target', 'effect', 'value'], limit: 1000 },
      },
      project ? { project } : {},
    )
    return (a.value as { target: string; effect: 'set' | 'uncertain'; value: string | null }[]).map((r) => ({
      target: r.target,
      effect: r.effect,
      value: r.value,
    }))
  }

  /**
   * States a rule: when `source` changes, `target` takes `value` (`effect: 'set'`) or becomes uncertain.
   * @throws {MnemoError} `INVALID_INPUT` — a `set` rule without a value, or a rule from a key to itself.
   */
  async addRule(
    rule: { source: string; target: string; effect: 'set' | 'uncertain'; value?: string; stated?: string },
    options: { project?: ProjectRef } = {},
  ): Promise<void> {
    if (rule.source === rule.target) throw invalidInput('target', `a rule cannot make ${rule.source} depend on itself`)
    if (rule.effect === 'set' && (rule.value === undefined || rule.value.length === 0))
      throw invalidInput('value', `a set rule from ${rule.source} to ${rule.target} needs the value ${rule.target} takes`)
    await this.ensure(options.project)
    await this.facts.add(
      RULE_COLLECTION.name,
      {
        source: rule.source,
        target: rule.target,
        effect: rule.effect,
        ...(rule.value !== undefined ? { value: rule.value } : {}),
        ...(rule.stated !== undefined ? { stated: rule.stated } : {}),
      },
      {
        ...(options.project ? { project: options.project } : {}),
        provenance: { source: 'user', ...(rule.stated ? { quote: rule.stated } : {}) },
      },
    )
  }

  /**
   * States the value of a key, then propagates the change through the rules (breadth first, each key visited once):
   * `set` targets take their declared value, `uncertain` ones become unknown; the targets' own rules run in turn.
   * A first value, or the same value again (a confirmation, also of an uncertain key), changes nothing downstream:
   * dependants keep their values and certainty.
   * @returns The changes made, the stated one first.
   */
  async set(key: string, value: string, options: { project?: ProjectRef; quote?: string } = {}): Promise<StateChange[]> {
    if (key.length === 0) throw invalidInput('key', 'a state key must not be empty')
    await this.ensure(options.project)
    const project = options.project
    const at = new Date(this.now()).toISOString()
    const before = await this.current(key, project)
    const changes: StateChange[] = []
    const write = async (
      k: string,
      v: string,
      certainty: 'known' | 'uncertain',
      because: string | undefined,
      source: 'user' | 'rule',
    ): Promise<void> => {
      await this.facts.add(
        STATE_COLLECTION.name,
        { key: k, value: v, certainty, ...(because !== undefined ? { because } : {}), changed_at: at },
        {
          ...(project ? { project } : {}),
          provenance: { source: source === 'rule' ? 'agent' : 'user', quote: because ?? options.quote ?? `${k} is ${v}` },
        },
      )
    }
    const old = (before?.values['value'] as string | null | undefined) ?? null
    await write(key, value, 'known', undefined, 'user')
    changes.push({ key, before: old, after: value, certainty: 'known' })
    // A confirmation (the value it had, known or uncertain before) changed nothing its dependants rest on.
    if (before === undefined || old === value) return changes
    const seen = new Set([key])
    const queue: { key: string; value: string; certain: boolean }[] = [{ key, value, certain: true }]
    while (queue.length > 0) {
      const source = queue.shift()!
      for (const rule of await this.rulesFrom(source.key, project)) {
        if (seen.has(rule.target)) continue
        seen.add(rule.target)
        const target = await this.current(rule.target, project)
        const prior = (target?.values['value'] as string | null | undefined) ?? null
        if (rule.effect === 'set' && source.certain && rule.value !== null) {
          const because = `${source.key} changed to ${source.value} on ${at.slice(0, 10)}`
          await write(rule.target, rule.value, 'known', because, 'rule')
          changes.push({ key: rule.target, before: prior, after: rule.value, certainty: 'known', because })
          queue.push({ key: rule.target, value: rule.value, certain: true })
        } else if (prior !== null) {
          const because = `it depended on ${source.key}, which ${source.certain ? `changed to ${source.value}` : 'became unknown'} on ${at.slice(0, 10)}`
          await write(rule.target, prior, 'uncertain', because, 'rule')
          changes.push({ key: rule.target, before: prior, after: prior, certainty: 'uncertain', because })
          queue.push({ key: rule.target, value: prior, certain: false })
        }
      }
    }
    return changes
  }

  /**
   * The uncertain keys that no context block has shown in their current uncertain version, oldest change first (then
   * by key): each with its line for the block. Empty when the scope has no entity-attribute facts.
   */
  async uncertainNotices(options: { project?: ProjectRef } = {}): Promise<UncertainNotice[]> {
    const where = options.project ? { project: options.project } : {}
    if ((await this.facts.collection(STATE_COLLECTION.name, where)) === undefined) return []
    const rows = (
      await this.facts.query(
        {
          collection: STATE_COLLECTION.name,
          where: { field: 'certainty', op: '=', value: { kind: 'string', value: 'uncertain' } },
          verb: { verb: 'list', fields: ['key', 'value', 'because', 'changed_at'], limit: 1000 },
        },
        where,
      )
    ).value as { key: string; value: string; because: string | null; changed_at: string }[]
    if (rows.length === 0) return []
    const shown = new Map<string, string>()
    if ((await this.facts.collection(NOTICE_COLLECTION.name, where)) !== undefined) {
      const seen = await this.facts.query(
        { collection: NOTICE_COLLECTION.name, verb: { verb: 'list', fields: ['key', 'changed_at'], limit: 1000 } },
        where,
      )
      for (const r of seen.value as { key: string; changed_at: string }[]) shown.set(r.key, r.changed_at)
    }
    return rows
      .filter((r) => shown.get(r.key) !== r.changed_at)
      .sort((a, b) => (a.changed_at < b.changed_at ? -1 : a.changed_at > b.changed_at ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .map((r) => ({
        key: r.key,
        changedAt: r.changed_at,
        text: `Uncertain: ${r.key} was ${r.value}, but ${r.because ?? 'what it depended on changed'}`,
      }))
  }

  /** Records that a context block showed these notices, so no later block repeats them. */
  async noteSurfaced(notices: readonly UncertainNotice[], options: { project?: ProjectRef } = {}): Promise<void> {
    if (notices.length === 0) return
    const where = options.project ? { project: options.project } : {}
    if ((await this.facts.collection(NOTICE_COLLECTION.name, where)) === undefined) await this.facts.declare(NOTICE_COLLECTION, where)
    await this.facts.add(
      NOTICE_COLLECTION.name,
      notices.map((n) => ({ key: n.key, changed_at: n.changedAt })),
      { ...where, provenance: { source: 'agent', quote: 'shown in a context block' } },
    )
  }

  /**
   * A key's answer and the facts that depend on it, breadth first through the rules (each key once, at most
   * {@link MAX_DEPENDANTS}), each with its current answer (`uncertain` ones wait to be confirmed or re-resolved).
   * @throws {MnemoError} `INVALID_INPUT` — an empty key.
   */
  async dependants(key: string, options: { project?: ProjectRef } = {}): Promise<{ answer: StateAnswer; dependants: Dependant[] }> {
    if (key.length === 0) throw invalidInput('key', 'a state key must not be empty')
    const answer = await this.answer(key, options)
    const dependants: Dependant[] = []
    const seen = new Set([key])
    const queue = [key]
    while (queue.length > 0 && dependants.length < MAX_DEPENDANTS) {
      const via = queue.shift()!
      for (const rule of await this.rulesFrom(via, options.project)) {
        if (seen.has(rule.target) || dependants.length >= MAX_DEPENDANTS) continue
        seen.add(rule.target)
        const a = await this.answer(rule.target, options)
        dependants.push({ key: rule.target, via, effect: rule.effect, status: a.status, value: a.value, text: a.text })
        queue.push(rule.target)
      }
    }
    return { answer, dependants }
  }

  /**
   * Resolves an uncertain key: without a value (or with the value it had), confirms it, known again at that value, and
   * nothing downstream changes (its value did not); with a new value, states it as `set` does, and its rules run.
   * Its own dependants stay as they are: each is confirmed or re-resolved in turn.
   * @returns The changes made, the resolved key first.
   * @throws {MnemoError} `NOT_FOUND` — no such key. `INVALID_INPUT` (`certainty`) — the key is not uncertain; an
   *   empty value.
   */
  async resolve(key: string, value: string | undefined, options: { project?: ProjectRef } = {}): Promise<StateChange[]> {
    const record = await this.current(key, options.project)
    if (!record) throw new MnemoError('NOT_FOUND', `no fact ${key} is recorded`, { details: { kind: 'record', id: key } })
    const prior = record.values['value'] as string
    if (record.values['certainty'] !== 'uncertain')
      throw invalidInput(
        'certainty',
        `${key} (record ${record.id}).certainty is known, not uncertain: it is ${JSON.stringify(prior)}`,
        'only an uncertain fact is confirmed or re-resolved; state a new value for a known one instead',
      )
    if (value !== undefined && value.length === 0) throw invalidInput('value', `the value resolving ${key} must not be empty`)
    if (value !== undefined && value !== prior) return await this.set(key, value, options)
    await this.facts.add(
      STATE_COLLECTION.name,
      { key, value: prior, certainty: 'known', changed_at: new Date(this.now()).toISOString() },
      { ...(options.project ? { project: options.project } : {}), provenance: { source: 'user', quote: `${key} is still ${prior}` } },
    )
    return [{ key, before: prior, after: prior, certainty: 'known' }]
  }

  /** Forgets a key for real (see `EngineFacts.delete`). @throws {MnemoError} `NOT_FOUND` — no such key. */
  async forget(key: string, options: { project?: ProjectRef } = {}): Promise<void> {
    const record = await this.current(key, options.project)
    if (!record) throw new MnemoError('NOT_FOUND', `no fact ${key} is recorded`, { details: { kind: 'record', id: key } })
    await this.facts.delete(record.id, { ...(options.project ? { project: options.project } : {}), actor: 'facts' })
  }

  /**
   * The current answer for a key, rendered deterministically: the value, with "(changed on …, because …)" when a
   * rule set it; "unknown now: it was X, but it depended on …" when uncertain; "you asked me to forget that on …"
   * when deleted; "nothing recorded about <key>" otherwise.
   */
  async answer(key: string, options: { project?: ProjectRef } = {}): Promise<StateAnswer> {
    const record = await this.current(key, options.project)
    if (!record) {
      const gone = (await this.facts.collection(STATE_COLLECTION.name, options.project ? { project: options.project } : {}))
        ? await this.facts.deletedByIdentity(STATE_COLLECTION.name, { key }, options.project ? { project: options.project } : {})
        : undefined
      if (gone) return { key, status: 'deleted', value: null, history: [], text: `you asked me to forget that on ${day(gone.deletedAt)}` }
      return { key, status: 'unknown', value: null, history: [], text: `nothing recorded about ${key}` }
    }
    const shown = await this.facts.show(record.id, options.project ? { project: options.project } : {})
    const history: string[] = []
    if ('history' in shown)
      for (const v of shown.history)
        if (typeof v.values['value'] === 'string' && history.at(-1) !== v.values['value']) history.push(v.values['value'])
    const value = record.values['value'] as string
    const because = record.values['because'] as string | null
    if (record.values['certainty'] === 'uncertain')
      return {
        key,
        status: 'uncertain',
        value,
        history,
        text: `unknown now: it was ${value}, but ${because ?? 'what it depended on changed'}`,
        record: record.id,
      }
    if (because)
      return {
        key,
        status: 'changed',
        value,
        history,
        text: `${value} (changed on ${day(record.recordedAt)}, because ${because})`,
        record: record.id,
      }
    return { key, status: 'current', value, history, text: value, record: record.id }
  }
}
