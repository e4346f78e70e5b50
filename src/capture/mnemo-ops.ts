import { fnv1a64 } from '../core/hash.js'
import { AGENT_NAMES, type AgentName, type EventInput, type MemoryKind, type ProjectRef } from '../core/types.js'
import type { Deriver } from './derivation.js'
import { sanitizePayload, type Redactor } from './sanitize.js'

/** Session key under which mnemo logs its own operations for a project. */
export const MNEMO_SESSION_PREFIX = 'mnemo:'

export type MemoryOpName = 'pin' | 'unpin' | 'archive' | 'restore'

type OpPayload =
  | { op: 'remember'; kind: MemoryKind; text: string; supersedes?: string; sameAs?: string; sources?: string[]; subject?: string; confidence?: number; agent?: AgentName }
  | { op: MemoryOpName; id: string }

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
  options: { redact?: Redactor; supersedes?: string; sameAs?: string; sources?: string[]; subject?: string; confidence?: number; user?: string; agent?: AgentName } = {},
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
    idemKey: `mnemo:remember:${fnv1a64(`${project.root}\u0000${kind}\u0000${payload.text}${options.user !== undefined ? `\u0000${options.user}` : ''}${payload.agent !== undefined ? `\u0001${payload.agent}` : ''}`)}:${nowMs}`,
    payload,
    ...(options.user !== undefined ? { user: options.user } : {}),
  }
}

/** The log event for a lifecycle change of a memory (pin, unpin, archive, restore). */
export function memoryOpEvent(project: ProjectRef, op: MemoryOpName, id: string, nowMs: number): EventInput {
  return {
    agent: 'mnemo',
    format: 'mnemo',
    type: op,
    sessionKey: `${MNEMO_SESSION_PREFIX}${project.root}`,
    project,
    ts: nowMs,
    idemKey: `mnemo:${op}:${id}:${nowMs}`,
    payload: { op, id },
  }
}

/** remember → a memory (through the write guard); pin/unpin/archive/restore → a lifecycle change. */
export const deriveMnemoOp: Deriver = (event) => {
  const p = event.payload as OpPayload
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
        ...(typeof p.confidence === 'number' && p.confidence >= 0 && p.confidence <= 1 ? { confidence: p.confidence } : {}),
        ...(typeof p.agent === 'string' && (AGENT_NAMES as readonly string[]).includes(p.agent) ? { agent: p.agent } : {}),
      },
    }
  }
  if (p.op === 'pin' || p.op === 'unpin' || p.op === 'archive' || p.op === 'restore') return { observations: [], memoryOps: [{ op: p.op, id: p.id }] }
  return { observations: [] }
}
