import { fnv1a64, stableStringify } from '../core/hash.js'
import { ownKey } from '../core/user.js'
import { FACT_STATUSES, type FactOp } from '../core/facts/fact-types.js'
import type { EventInput, ProjectRef } from '../core/types.js'
import type { Deriver } from './derivation.js'
import { MNEMO_SESSION_PREFIX } from './mnemo-ops.js'

/** Event type of a fact ledger operation (format `mnemo`, payload a `FactOp`). */
export const FACT_EVENT_TYPE = 'fact'

/**
 * The log event of one fact ledger operation: format `mnemo`, in mnemo's own session of the project, keyed by the
 * operation's content and time in the user's namespace (the same operation delivered twice is one event).
 */
export function factEvent(project: ProjectRef, op: FactOp, nowMs: number, user?: string): EventInput {
  const target = op.action === 'declare' ? op.collection.name : `${op.collection}:${op.id}`
  return {
    agent: 'mnemo',
    format: 'mnemo',
    type: FACT_EVENT_TYPE,
    sessionKey: `${MNEMO_SESSION_PREFIX}${project.root}`,
    project,
    ts: nowMs,
    idemKey: ownKey(`mnemo:fact:${op.action}:${fnv1a64(`${project.root}\u0000${target}\u0000${stableStringify(op)}`)}:${nowMs}`, user),
    payload: op,
    ...(user !== undefined ? { user } : {}),
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)
const optNumber = (v: unknown): boolean => v === undefined || (typeof v === 'number' && Number.isFinite(v))
const SCALAR = (v: unknown): boolean =>
  v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))

/**
 * A fact operation read from a logged payload, checked for shape on every derivation (an export file is input like
 * any other); undefined for any other payload. Values were checked against their collection when written; here only
 * their JSON shape is.
 */
export function parseFactOp(value: unknown): FactOp | undefined {
  if (!isObject(value) || value['op'] !== 'fact') return undefined
  const p = value
  switch (p['action']) {
    case 'declare': {
      const c = p['collection']
      if (!isObject(c) || typeof c['name'] !== 'string' || !Array.isArray(c['fields']) || !Array.isArray(c['identity'])) return undefined
      if (!c['fields'].every((f) => isObject(f) && typeof f['name'] === 'string' && typeof f['type'] === 'string')) return undefined
      return p as unknown as FactOp
    }
    case 'assert': {
      if (typeof p['collection'] !== 'string' || typeof p['id'] !== 'string' || !isObject(p['values'])) return undefined
      if (
        !(FACT_STATUSES as readonly unknown[]).includes(p['status']) ||
        !isObject(p['provenance']) ||
        typeof p['provenance']['source'] !== 'string'
      )
        return undefined
      if (!optNumber(p['validFrom']) || !optNumber(p['validTo'])) return undefined
      if (!Object.values(p['values']).every((v) => SCALAR(v) || (Array.isArray(v) && v.every((x) => x !== null && SCALAR(x)))))
        return undefined
      return p as unknown as FactOp
    }
    case 'retract':
      return typeof p['collection'] === 'string' && typeof p['id'] === 'string' && typeof p['at'] === 'number'
        ? (p as unknown as FactOp)
        : undefined
    case 'delete':
      return typeof p['collection'] === 'string' && typeof p['id'] === 'string' ? (p as unknown as FactOp) : undefined
    default:
      return undefined
  }
}

/** A fact event's derivation: its operation, or nothing for a payload of another shape. */
export const deriveFactEvent: Deriver = (event) => {
  const op = parseFactOp(event.payload)
  return op === undefined ? { observations: [] } : { observations: [], facts: [op] }
}
