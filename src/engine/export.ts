import type { Memory, MemoryKind, Project } from '../core/types.js'
import type { AuditEntry, StoredEvent } from '../storage/store.js'

/** Identifies mnemo's export format in the manifest line. */
export const EXPORT_FORMAT = 'mnemo-export'
/** Version of the export format; bumped on any incompatible change. */
export const EXPORT_VERSION = 1

/**
 * mnemo's export format, version 1: UTF-8 JSON Lines.
 *
 * Line 1, the manifest:
 * `{"format":"mnemo-export","version":1,"exportedAt":ISO,"project":root|null,
 *   "counts":{"events":n,"tombstones":n,"audit":n,"sessions":n,"observations":n,"memories":n}}`
 * Then one record per line, `kind` first:
 * - `{"kind":"event","seq","idemKey","agent","format","type","sessionKey","project":{root,name},"ts","sessionStartedAt"?,"user"?,"receivedAt","payload"}`
 *   every logged event, in log order: everything else (sessions,
 *   observations, memories with their versions, validity intervals,
 *   archive and pin state, graph mentions, vectors) derives from these, with
 *   the same ids, because ids are a function of event time and key. (One
 *   exception: a session or project whose first events were deleted keeps
 *   its id in its own store, `kept_ids`, but an import names it from its
 *   first remaining event.)
 *   `format` is the source's (`claude-hook`, `claude-transcript`,
 *   `codex-rollout`, `gemini-session`, `opencode-storage`, `cursor-state`,
 *   `locomo-turn`), `mnemo` for mnemo's
 *   own operations, or `folded` for an event `mnemo compact` folded: its
 *   payload is `{"v":1,"from":format,"observations":[…],"session"?}`, what
 *   the event derived (capture/folded.ts);
 * - `{"kind":"tombstone","idemKey","at","projectRoot"}` deleted events' keys;
 * - `{"kind":"audit","at","actor","action","target","count","details"?}`.
 * `user` is the user the event was captured for (absent: shared). An export
 * by a user holds their events and shared ones (export-io.ts).
 * `sessions` (agents' sessions), `observations` and `memories` in the
 * manifest are the derived counts an import into an empty store must reproduce.
 */
/** The manifest line of an export (validated by `exportManifestSchema` in export-parse.ts). */
export interface ExportManifest {
  format: typeof EXPORT_FORMAT
  version: typeof EXPORT_VERSION
  exportedAt: string
  project: string | null
  counts: { events: number; tombstones: number; audit: number; sessions: number; observations: number; memories: number }
}

export function eventRecord(e: StoredEvent): Record<string, unknown> {
  return {
    kind: 'event',
    seq: e.seq,
    idemKey: e.idemKey,
    agent: e.agent,
    format: e.format,
    type: e.type,
    sessionKey: e.sessionKey,
    project: e.project,
    ts: e.ts,
    ...(e.sessionStartedAt !== undefined ? { sessionStartedAt: e.sessionStartedAt } : {}),
    ...(e.user !== undefined ? { user: e.user } : {}),
    receivedAt: e.receivedAt,
    payload: e.payload,
  }
}

export function auditRecord(a: AuditEntry): Record<string, unknown> {
  return {
    kind: 'audit',
    at: a.at,
    actor: a.actor,
    action: a.action,
    target: a.target,
    count: a.count,
    ...(a.details ? { details: a.details } : {}),
  }
}

/**
 * True when `text` starts with a mnemo export manifest.
 */
export function isMnemoExport(text: string): boolean {
  const first = text.slice(0, text.indexOf('\n') >= 0 ? text.indexOf('\n') : text.length)
  return first.includes(`"format":"${EXPORT_FORMAT}"`) || first.includes(`"format": "${EXPORT_FORMAT}"`)
}

const KIND_TITLES: Record<MemoryKind, string> = {
  decision: 'Decisions',
  fact: 'Facts',
  preference: 'Preferences',
  lesson: 'Lessons',
  procedure: 'Procedures',
  summary: 'Session summaries',
}

/**
 * A project's memories as Markdown a person can read: current memories by
 * kind (pinned first), then superseded versions with their validity intervals.
 */
export function memoriesMarkdown(project: Project, current: readonly Memory[], superseded: readonly Memory[], exportedAt: number): string {
  const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10)
  const lines = [
    `# ${project.name}`,
    '',
    `Memories recorded by mnemo for \`${project.root}\`, exported ${new Date(exportedAt).toISOString()}.`,
    '',
  ]
  for (const kind of Object.keys(KIND_TITLES) as MemoryKind[]) {
    const items = current.filter((m) => m.kind === kind)
    if (items.length === 0) continue
    lines.push(`## ${KIND_TITLES[kind]}`, '')
    for (const m of items) {
      const facts = `_(since ${day(m.validFrom)}${m.seenCount > 1 ? `, seen ${m.seenCount}×` : ''}${m.archivedAt ? ', archived' : ''})_`
      if (kind === 'procedure') {
        // A procedure keeps its lines (name, when, numbered steps, files, check), indented under its item.
        const [first = '', ...rest] = m.text.split('\n')
        lines.push(`- ${m.pinned ? '📌 ' : ''}**${first.replace(/^Procedure:\s*/, '')}** ${facts}`, ...rest.map((l) => `  ${l}`))
      } else lines.push(`- ${m.pinned ? '📌 ' : ''}${m.text.replace(/\s+/g, ' ')} ${facts}`)
    }
    lines.push('')
  }
  if (superseded.length > 0) {
    lines.push('## Superseded', '')
    for (const m of superseded)
      lines.push(`- ~~${m.text.replace(/\s+/g, ' ')}~~ _(${day(m.validFrom)} – ${m.validTo !== undefined ? day(m.validTo) : '?'})_`)
    lines.push('')
  }
  if (current.length === 0 && superseded.length === 0) lines.push('_No memories yet._', '')
  return lines.join('\n')
}

/**
 * A project name as a file name that keeps it readable in any script (`注文サービス`, `café-api`): NFC,
 * only the characters file systems refuse or treat specially (`/ \\ : * ? " < > |`, control characters,
 * leading dots and trailing dots or spaces) replaced by `_`, at most 100 characters.
 */
export function markdownFileBase(projectName: string): string {
  const safe = [
    ...projectName
      .normalize('NFC')
      .replace(/[/\\:*?"<>|\p{Cc}]+/gu, '_')
      .replace(/^[.\s]+|[.\s]+$/g, ''),
  ]
    .slice(0, 100)
    .join('')
  return safe === '' || /^_+$/.test(safe) ? 'project' : safe
}
