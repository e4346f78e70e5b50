import { fnv1a64 } from '../core/hash.js'
import type { EventInput, MemoryKind, ProjectRef } from '../core/types.js'
import type { Deriver } from './derivation.js'
import { sanitizePayload, type Redactor } from './sanitize.js'

/** Session key under which mnemo logs its own operations for a project. */
export const MNEMO_SESSION_PREFIX = 'mnemo:'

type OpPayload = { op: 'remember'; kind: MemoryKind; text: string } | { op: 'forget'; ids: string[]; reason?: string }

/**
 * The log event for an explicit `remember`. Its idempotency key hashes the
 * project, kind and text, so remembering the same thing twice stores it once.
 */
export function rememberEvent(project: ProjectRef, kind: MemoryKind, text: string, nowMs: number, redact?: Redactor): EventInput {
  const payload = sanitizePayload({ op: 'remember', kind, text }, redact) as OpPayload & { op: 'remember' }
  return {
    agent: 'mnemo',
    format: 'mnemo',
    type: 'remember',
    sessionKey: `${MNEMO_SESSION_PREFIX}${project.root}`,
    project,
    ts: nowMs,
    idemKey: `mnemo:remember:${fnv1a64(`${project.root}\u0000${kind}\u0000${payload.text}`)}`,
    payload,
  }
}

/** The log event for a `forget` of observations or memories (a tombstone replayed by `rebuild`). */
export function forgetEvent(project: ProjectRef, ids: string[], nowMs: number): EventInput {
  return {
    agent: 'mnemo',
    format: 'mnemo',
    type: 'forget',
    sessionKey: `${MNEMO_SESSION_PREFIX}${project.root}`,
    project,
    ts: nowMs,
    idemKey: `mnemo:forget:${ids.join(',')}:${nowMs}`,
    payload: { op: 'forget', ids },
  }
}

/** remember → a memory; forget → removal of the named observations and memories. */
export const deriveMnemoOp: Deriver = (event) => {
  const p = event.payload as OpPayload
  if (p.op === 'remember') return { observations: [], memory: { kind: p.kind, text: p.text } }
  if (p.op === 'forget') return { observations: [], forget: p.ids }
  return { observations: [] }
}
