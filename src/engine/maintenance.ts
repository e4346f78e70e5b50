import { deriveEvent } from '../capture/derive.js'
import { foldPayload } from '../capture/folded.js'
import { redactValue } from '../capture/redact.js'
import { invalidInput } from '../core/errors.js'
import type { ProjectId } from '../core/ids.js'
import type { Project } from '../core/types.js'
import type { Embedder } from '../providers/embedder.js'
import type { BuiltinVectors } from './builtin-vectors.js'
import type { EngineContext } from './engine-context.js'

// The bodies of MnemoEngine's upkeep of a store (secret rescans, vector reindexing, log compaction); the engine's
// methods carry their contracts.

/** `MnemoEngine.rescanSecrets`. */
export async function rescanSecrets(
  ctx: EngineContext,
  actor: string,
): Promise<{ eventsChanged: number; events: number; observations: number }> {
  const changed = await ctx.store.rewritePayloads((payload) => redactValue(payload))
  const rebuilt = await ctx.rebuild()
  await ctx.store.audit({
    at: ctx.clock.now(),
    actor,
    action: 'redact-rescan',
    target: '*',
    count: changed,
    details: { events: rebuilt.events },
  })
  return { eventsChanged: changed, ...rebuilt }
}

/** `MnemoEngine.reindex`: `builtin` loads the builtin vectors (created on first use). */
export async function reindex(
  ctx: EngineContext,
  builtin: () => Promise<BuiltinVectors>,
  embedder: Embedder | undefined,
  options: { projectIds?: readonly ProjectId[]; onProgress?: (stage: string, done: number, total: number) => void },
): Promise<{ builtinProjects: number; embedded: number; space: string | undefined }> {
  const projects =
    options.projectIds && options.projectIds.length > 0 ? [...options.projectIds] : (await ctx.store.listProjects()).map((p) => p.id)
  let builtinProjects = 0
  for (const p of projects) {
    if (await (await builtin()).prepare(p, true, (done, total) => options.onProgress?.(`builtin ${p}`, done, total))) builtinProjects++
  }
  let embedded = 0
  if (embedder) {
    const total = await ctx.store.countDocs({ projectIds: projects })
    for (;;) {
      const batch = await ctx.store.docsWithoutVector(embedder.spaceId, { projectIds: projects }, 64)
      if (batch.length === 0) break
      const vecs = await embedder.embed(
        batch.map((d) => d.text),
        'document',
      )
      await ctx.store.putVectors(
        embedder.spaceId,
        batch.map((d, i) => ({ docKey: d.docKey, vec: vecs[i]! })),
      )
      embedded += batch.length
      options.onProgress?.(embedder.spaceId, embedded, total)
    }
  }
  return { builtinProjects, embedded, space: embedder?.spaceId }
}

/** `MnemoEngine.compact`. */
export async function compact(
  ctx: EngineContext,
  options: { before: number; project?: Project; vacuum?: boolean },
  actor: string,
): Promise<{ events: number; payloadBytesBefore: number; payloadBytesAfter: number; fileBytesBefore: number; fileBytesAfter: number }> {
  if (!Number.isFinite(options.before)) throw invalidInput('before', `before must be a time (got ${String(options.before)})`)
  // A user compacts their own events (shared ones too without a user); `allUsers`, everyone's.
  const user = ctx.access.allUsers ? {} : { user: ctx.access.user ?? null }
  const folded = await ctx.store.foldEvents(
    { before: options.before, ...(options.project ? { projectRoot: options.project.root } : {}), ...user },
    (event) => {
      const payload = foldPayload(event, deriveEvent(event))
      // Only where it saves space: a small hook payload can be shorter than the text derived from it.
      return payload && JSON.stringify(payload).length < JSON.stringify(event.payload).length ? { format: 'folded', payload } : undefined
    },
  )
  const file =
    options.vacuum === false
      ? { bytesBefore: (await ctx.store.stats()).bytes, bytesAfter: (await ctx.store.stats()).bytes }
      : await ctx.store.vacuum()
  await ctx.store.audit({
    at: ctx.clock.now(),
    actor,
    action: 'compact',
    target: options.project?.root ?? '*',
    count: folded.events,
    details: {
      before: new Date(options.before).toISOString(),
      payloadBytesBefore: folded.bytesBefore,
      payloadBytesAfter: folded.bytesAfter,
    },
  })
  return {
    events: folded.events,
    payloadBytesBefore: folded.bytesBefore,
    payloadBytesAfter: folded.bytesAfter,
    fileBytesBefore: file.bytesBefore,
    fileBytesAfter: file.bytesAfter,
  }
}
