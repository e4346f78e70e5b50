import type { ProjectId } from '../core/ids.js'
import { contentKey } from '../lifecycle/write-guard.js'
import type { Store } from '../storage/store.js'

// What a forget or scoped delete takes besides the events it names: the memories derived from
// deleted observations, and every logged statement of a forgotten memory.

/** Ids of the memories whose provenance names any of these observations. */
export async function derivedMemoryIds(store: Store, projectId: ProjectId, observationIds: readonly string[]): Promise<string[]> {
  const out = new Set<string>()
  for (let i = 0; i < observationIds.length; i += 5000) {
    const page = await store.memoriesFromObservations(projectId, observationIds.slice(i, i + 5000))
    for (const ids of page.values()) for (const m of ids) out.add(m)
  }
  return [...out]
}

/**
 * Deletes the events of memories: each one's own, every remember of the
 * same memory by the same user (same content, or matched to it) and its pin/archive
 * history, in one pass over the log. Ids of memories that are gone are skipped.
 * @returns How many events were deleted.
 */
export async function forgetMemoryEvents(store: Store, ids: readonly string[]): Promise<number> {
  const targets: { id: string; seq: number; root: string; user: string | undefined; key: string }[] = []
  for (const id of ids) {
    const memory = await store.getMemory(id)
    const seq = await store.sourceEventOf(id)
    const root = memory && (await store.getProject(memory.projectId))?.root
    if (memory && seq !== undefined && root !== undefined)
      targets.push({ id, seq, root, user: memory.user, key: contentKey(memory.kind, memory.text) })
  }
  if (targets.length === 0) return 0
  const seqs = new Set(targets.map((t) => t.seq))
  for (let after = 0; ; ) {
    const page = await store.readEvents(after, 1000)
    if (page.length === 0) break
    for (const e of page) {
      after = e.seq
      if (e.format !== 'mnemo') continue
      const p = e.payload as { op?: string; id?: string; sameAs?: string; kind?: string; text?: string }
      const key = p.op === 'remember' && p.kind !== undefined && p.text !== undefined ? contentKey(p.kind, p.text) : undefined
      const names = (t: (typeof targets)[number]): boolean =>
        e.project.root === t.root && ((p.op === 'remember' && e.user === t.user && (p.sameAs === t.id || key === t.key)) || p.id === t.id)
      if (targets.some(names)) seqs.add(e.seq)
    }
  }
  return await store.deleteEvents({ seqs: [...seqs] })
}
