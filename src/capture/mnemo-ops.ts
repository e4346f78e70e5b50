import { fnv1a64 } from '../core/hash.js'
import { ownKey } from '../core/user.js'
import { AGENT_NAMES, type AgentName, type EventInput, type MemoryKind, type ProjectRef } from '../core/types.js'
import type { Deriver } from './derivation.js'
import { sanitizePayload, type Redactor } from './sanitize.js'

/** Session key under which mnemo logs its own operations for a project. */
export const MNEMO_SESSION_PREFIX = 'mnemo:'

export type MemoryOpName = 'pin' | 'unpin' | 'archive' | 'restore'

type OpPayload =
  | {
      op: 'remember'
      kind: MemoryKind
      text: string
      supersedes?: string
      sameAs?: string
      sources?: string[]
      subject?: string
      confidence?: number
      agent?: AgentName
      /** Written under agent isolation: the write guard stays within its agent on every later rebuild, whatever the setting then. */
      guard?: 'agent'
    }
  | { op: MemoryOpName; id: string }

const ALL_KINDS: readonly string[] = ['decision', 'fact', 'preference', 'lesson', 'summary', 'procedure']
const OPS: readonly string[] = ['pin', 'unpin', 'archive', 'restore']

/**
 * What a `mnemo`-format event holds, checked on every derivation (an export
 * file is input like any other); `undefined` for any other shape, which then
 * derives nothing. Hand-written rather than a zod schema: it runs on the hook
 * path, which keeps zod out of its start-up.
 */
function parseOpPayload(value: unknown): OpPayload | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
  const p = value as Record<string, unknown>
  const optString = (k: string): boolean => p[k] === undefined || typeof p[k] === 'string'
  if (p['op'] === 'remember') {
    if (typeof p['kind'] !== 'string' || !ALL_KINDS.includes(p['kind']) || typeof p['text'] !== 'string' || p['text'].length === 0)
      return undefined
    if (!optString('supersedes') || !optString('sameAs') || !optString('subject')) return undefined
    if (p['sources'] !== undefined && !(Array.isArray(p['sources']) && p['sources'].every((x) => typeof x === 'string'))) return undefined
    if (p['confidence'] !== undefined && !(typeof p['confidence'] === 'number' && p['confidence'] >= 0 && p['confidence'] <= 1))
      return undefined
    if (p['agent'] !== undefined && !(typeof p['agent'] === 'string' && (AGENT_NAMES as readonly string[]).includes(p['agent'])))
      return undefined
    if (p['guard'] !== undefined && p['guard'] !== 'agent') return undefined
    return p as OpPayload
  }
  if (typeof p['op'] === 'string' && OPS.includes(p['op']) && typeof p['id'] === 'string' && p['id'].length > 0) return p as OpPayload
  return undefined
}

/**
 * The log event for an explicit `remember`. Every call is logged (its key
 * includes the time); the write guard then decides whether it is a new
 * memory, the same one seen again (`sameAs`, or equal content), or a new
 * version of one (`supersedes`, or the same subject).
 */
export function rememberEvent(
  project: ProjectRef,
  kind: MemoryKind,
  text: string,
  nowMs: number,
  options: {
    redact?: Redactor
    supersedes?: string
    sameAs?: string
    sources?: string[]
    subject?: string
    confidence?: number
    user?: string
    agent?: AgentName
    guardByAgent?: boolean
  } = {},
): EventInput {
  const payload = sanitizePayload(
    {
      op: 'remember',
      kind,
      text,
      ...(options.supersedes ? { supersedes: options.supersedes } : {}),
      ...(options.sameAs ? { sameAs: options.sameAs } : {}),
      ...(options.sources && options.sources.length > 0 ? { sources: options.sources } : {}),
      ...(options.subject ? { subject: options.subject } : {}),
      ...(options.confidence !== undefined ? { confidence: options.confidence } : {}),
      ...(options.agent !== undefined && options.agent !== 'mnemo' ? { agent: options.agent } : {}),
      ...(options.guardByAgent ? { guard: 'agent' } : {}),
    },
    options.redact,
  ) as OpPayload & { op: 'remember' }
  return {
    agent: 'mnemo',
    format: 'mnemo',
    type: 'remember',
    sessionKey: `${MNEMO_SESSION_PREFIX}${project.root}`,
    project,
    ts: nowMs,
    // Whose statement it is is part of its identity: two users or agents stating the same words at once are two events.
    // In the user's namespace (`ownKey`), as their captures are: their tombstones are theirs alone.
    idemKey: ownKey(
      `mnemo:remember:${fnv1a64(`${project.root}\u0000${kind}\u0000${payload.text}${options.user !== undefined ? `\u0000${options.user}` : ''}${payload.agent !== undefined ? `\u0001${payload.agent}` : ''}`)}:${nowMs}`,
      options.user,
    ),
    payload,
    ...(options.user !== undefined ? { user: options.user } : {}),
  }
}

/**
 * The log event for a lifecycle change of a memory (pin, unpin, archive,
 * restore), in the namespace of the memory's owner (`user`): it applies only
 * to a memory of that user, so an event from an import or another user
 * never changes someone else's memory.
 */
export function memoryOpEvent(project: ProjectRef, op: MemoryOpName, id: string, nowMs: number, user?: string): EventInput {
  return {
    ...(user !== undefined ? { user } : {}),
    agent: 'mnemo',
    format: 'mnemo',
    type: op,
    sessionKey: `${MNEMO_SESSION_PREFIX}${project.root}`,
    project,
    ts: nowMs,
    idemKey: ownKey(`mnemo:${op}:${id}:${nowMs}`, user),
    payload: { op, id },
  }
}

/** remember → a memory (through the write guard); pin/unpin/archive/restore → a lifecycle change. */
export const deriveMnemoOp: Deriver = (event) => {
  const p = parseOpPayload(event.payload)
  if (!p) return { observations: [] }
  if (p.op === 'remember') {
    return {
      observations: [],
      memory: {
        kind: p.kind,
        text: p.text,
        ...(p.supersedes ? { supersedes: p.supersedes } : {}),
        ...(p.sameAs ? { sameAs: p.sameAs } : {}),
        ...(p.sources ? { sources: p.sources } : {}),
        ...(p.subject ? { subject: p.subject } : {}),
        ...(p.confidence !== undefined ? { confidence: p.confidence } : {}),
        ...(p.agent !== undefined ? { agent: p.agent } : {}),
        ...(p.guard === 'agent' ? { guardByAgent: true as const } : {}),
      },
    }
  }
  return { observations: [], memoryOps: [{ op: p.op, id: p.id }] }
}
