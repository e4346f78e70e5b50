import type { Clock } from '../core/clock.js'
import { MnemoError } from '../core/errors.js'
import type { EventInput } from '../core/types.js'
import { ownEvent, ownKey } from '../core/user.js'
import { redactValue } from '../capture/redact.js'
import { defaultRedactor, sanitizePayload } from '../capture/sanitize.js'
import { DEFAULT_CAPS } from '../core/text.js'
import type { Project } from '../core/types.js'
import type { Derivation, Store } from '../storage/store.js'
import type { EngineContext } from './engine-context.js'
import {
  auditRecord,
  EXPORT_FORMAT,
  EXPORT_VERSION,
  type ExportManifest,
  eventRecord,
  markdownFileBase,
  memoriesMarkdown,
} from './export.js'
import { listProjects } from './projects.js'

/** What importing a mnemo export did: events stored and already there, observations derived, the manifest read. */
export interface ExportImportReport {
  events: number
  duplicates: number
  observations: number
  covered: number
  tombstones: number
  audit: number
  manifest: ExportManifest
}

/** `MnemoEngine.exportJsonl`. */
export async function exportJsonl(
  ctx: EngineContext,
  write: (line: string) => void,
  scope: { project?: Project },
): Promise<ExportManifest> {
  if (ctx.access.who().agent !== undefined) {
    // The raw log holds every agent's events of the user: under agent isolation an agent gets the Markdown export only.
    throw new MnemoError(
      'FORBIDDEN',
      `under agent isolation (MNEMO_AGENT_SCOPE=own) ${ctx.access.agent} may export Markdown only: the JSONL export is the raw log of every agent`,
      {
        details: { action: 'export' },
      },
    )
  }
  return await writeExport(ctx.store, ctx.clock, write, {
    ...(scope.project ? { projectRoot: scope.project.root } : {}),
    ...(ctx.access.allUsers ? {} : { user: ctx.access.user ?? null }),
  })
}

/** `MnemoEngine.importExport`. */
export function importExport(ctx: EngineContext, text: string, file: string): Promise<ExportImportReport> {
  return readExport(ctx.store, ctx.clock, ctx.derive, text, file, ctx.access.allUsers ? undefined : { user: ctx.access.user })
}

/** `MnemoEngine.exportMarkdown`. */
export async function exportMarkdown(ctx: EngineContext, scope: { project?: Project }): Promise<Map<string, string>> {
  const projects = scope.project ? [scope.project] : await listProjects(ctx)
  const out = new Map<string, string>()
  for (const p of projects) {
    const all = (await ctx.store.allMemories(p.id)).filter((m) => ctx.access.sees(m)).map((m) => ({ ...m, text: ctx.readRedact(m.text) }))
    const base = markdownFileBase(p.name)
    let name = `${base}.md`
    for (let i = 2; out.has(name); i++) name = `${base}-${i}.md`
    out.set(
      name,
      memoriesMarkdown(
        p,
        all.filter((m) => m.validTo === undefined),
        all.filter((m) => m.validTo !== undefined),
        ctx.clock.now(),
      ),
    )
  }
  return out
}

/**
 * Writes the store (or one project) in mnemo's export format
 * (see export.ts), one line at a time through `write`: a manifest, then
 * every event of the scope, tombstone and audit record. Secrets are
 * redacted once more on the way out.
 *
 * @param scope.projectRoot - Only this project's events (and its tombstones and audit records).
 * @param scope.user - A user's events and tombstones and shared ones, no audit records; `null`: shared ones only (audit included); omitted: every user's.
 * @returns The manifest written.
 */
export async function writeExport(
  store: Store,
  clock: Clock,
  write: (line: string) => void,
  scope: { projectRoot?: string; user?: string | null } = {},
): Promise<ExportManifest> {
  const root = scope.projectRoot
  const user = scope.user
  // A named user's export holds their own tombstones and shared ones (keys are namespaced by user: see `ownKey`), and no
  // audit records: the audit log is the operator's and names every user's items.
  const ownTombstone = (key: string): boolean =>
    user === undefined || !key.startsWith('user:') || (user !== null && key.startsWith(`user:${user}:`))
  const tombstones = (await store.tombstones(root)).filter((t) => ownTombstone(t.idemKey))
  const audit =
    typeof user === 'string' ? [] : (await store.auditLog(1_000_000)).reverse().filter((a) => root === undefined || a.target === root)
  const counts = await store.scopeCounts(root, user)
  const manifest: ExportManifest = {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exportedAt: new Date(clock.now()).toISOString(),
    project: root ?? null,
    counts: {
      events: counts.events,
      tombstones: tombstones.length,
      audit: audit.length,
      sessions: counts.sessions,
      observations: counts.observations,
      memories: counts.memories,
    },
  }
  write(JSON.stringify(manifest))
  for (let after = 0; ; ) {
    const page = await store.readScopedEvents(after, 1000, {
      ...(root !== undefined ? { projectRoot: root } : {}),
      ...(user !== undefined ? { user } : {}),
    })
    if (page.length === 0) break
    for (const e of page) {
      after = e.seq
      write(JSON.stringify(eventRecord({ ...e, payload: redactValue(e.payload) })))
    }
  }
  for (const t of tombstones) write(JSON.stringify({ kind: 'tombstone', idemKey: t.idemKey, at: t.at, projectRoot: t.projectRoot ?? null }))
  for (const a of audit) write(JSON.stringify(auditRecord(a)))
  return manifest
}

/**
 * Imports a mnemo export: validates the whole file first, then appends all
 * its events in order in one transaction, keeping their receipt times (ids
 * derive from the events, so they come out the same); only then adds its
 * tombstones and audit records. Any failure stores nothing. When the store
 * was empty, checks the derived counts against the manifest.
 *
 * @param owner - The user everything imported becomes (undefined: shared), its events' and tombstones' keys
 *   namespaced to match (see `ownEvent`); omitted: the users the file names (restoring a whole store).
 * @returns Events stored, duplicates skipped, observations derived and those another capture path had stored (`covered`), tombstones and audit records read, and the manifest.
 * @throws {MnemoError} `IMPORT_FAILED` — a malformed file (nothing stored), or counts that do not match after import.
 * @throws {MnemoError} `INVALID_INPUT` — an event the store refuses (another user's session): nothing stored.
 */
export async function readExport(
  store: Store,
  clock: Clock,
  derive: (event: EventInput) => Derivation,
  text: string,
  file: string,
  owner?: { user: string | undefined },
): Promise<ExportImportReport> {
  const { parseExport } = await import('./export-parse.js')
  const parsed = parseExport(text, file)
  const wasEmpty = (await store.stats()).events === 0
  // An export is input like any other: its payloads pass the same caps and secret detectors as a capture before they are stored.
  const batch = parsed.events.map(({ event, receivedAt }) => {
    // Room for the cut markers capture already put in: a field capped once is not cut again (the round trip stays lossless).
    const clean = {
      ...event,
      payload: sanitizePayload(event.payload, defaultRedactor, { ...DEFAULT_CAPS, fieldChars: DEFAULT_CAPS.fieldChars + 256 }),
    }
    return { event: owner ? ownEvent(clean, owner.user) : clean, receivedAt }
  })
  const r = await store.append(batch.map(({ event, receivedAt }) => ({ event, receivedAt, derive: () => derive(event) })))
  const events = r.inserted
  const duplicates = r.duplicates
  // A tombstone blocks a key for good: a file may only block keys of its importer's own namespace.
  await store.putTombstones(owner ? parsed.tombstones.map((t) => ({ ...t, idemKey: ownKey(t.idemKey, owner.user) })) : parsed.tombstones)
  for (const a of parsed.audit) await store.audit(a)
  if (wasEmpty) {
    const got = await store.scopeCounts(parsed.manifest.project ?? undefined)
    const want = parsed.manifest.counts
    const off = (['events', 'sessions', 'observations', 'memories'] as const).filter((k) => got[k] !== want[k])
    if (off.length > 0) {
      throw new MnemoError(
        'IMPORT_FAILED',
        `${file}: imported, but ${off.map((k) => `${k} ${got[k]} ≠ ${want[k]}`).join(', ')} (the manifest's counts)`,
        {
          details: { file, read: parsed.events.length, skipped: 0 },
          hint: 'the data was imported; the export may come from a mnemo that derives differently (a newer one, or a store that still held copies of steps captured twice before one copy per step was kept: run mnemo rebuild there before exporting)',
        },
      )
    }
  }
  await store.audit({ at: clock.now(), actor: 'cli', action: 'import-export', target: parsed.manifest.project ?? '*', count: events })
  return {
    events,
    duplicates,
    observations: r.observations,
    covered: r.covered,
    tombstones: parsed.tombstones.length,
    audit: parsed.audit.length,
    manifest: parsed.manifest,
  }
}
