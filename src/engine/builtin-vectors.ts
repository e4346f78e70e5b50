import { MnemoError } from '../core/errors.js'
import type { Clock } from '../core/clock.js'
import type { ProjectId } from '../core/ids.js'
import { deserializeLsa, embedLsa, fitLsa, serializeLsa, type LsaModel } from '../retrieval/lsa.js'
import { VectorMatrix } from '../retrieval/vector-index.js'
import type { Scope, Store } from '../storage/store.js'

/** When the builtin model is refitted: the project grew by this factor since the last fit. */
const LSA_REFIT_GROWTH = 1.25
/** Most documents (newest first) the model is fitted on; older ones are folded in. */
const LSA_MAX_TRAIN_DOCS = 5000
/** Embedding dimension of the builtin model. */
const LSA_DIM = 128

interface Prepared {
  space: string
  model: LsaModel
  matrix: VectorMatrix
  /** The project's document count when the matrix was read: another process's writes change it (see `prepareNow`). */
  docCount: number
}

/**
 * The builtin vector channel: one LSA model per project, learned from the
 * project's own documents, stored in the database with every document's
 * vector. Kept current incrementally: documents added since the last fit
 * are folded in (embedded with the existing model) on the next search, and
 * the model is refitted once the project has grown by `LSA_REFIT_GROWTH`.
 * Never runs on the hook path: only recall and `reindex` call it.
 */
export class BuiltinVectors {
  private readonly cache = new Map<string, Prepared>()
  /** Decoded models by space (a space names one fit of one project), so a search decodes a model once, not every time. */
  private readonly models = new Map<string, LsaModel>()
  /** Preparations under way, by project and scope: concurrent recalls of one project wait for one, not fit or embed twice. */
  private readonly pending = new Map<string, Promise<Prepared | undefined>>()

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /**
   * Brings a project's model and vectors up to date.
   *
   * @param force - Refit even if the model is fresh (`mnemo reindex`).
   * @returns The space and model, or `undefined` when the project is too small for a model.
   */
  async prepare(
    projectId: ProjectId,
    force = false,
    onProgress?: (done: number, total: number) => void,
    scope: Omit<Scope, 'projectIds'> = {},
  ): Promise<Prepared | undefined> {
    if (force) return await this.prepareNow(projectId, true, onProgress, scope)
    const key = `${projectId}|${scopeKey(scope)}`
    const pending = this.pending.get(key)
    if (pending) return await pending
    // A recall does not wait for another process's write lock to store vectors: this once it searches without them.
    const run = this.store
      .withoutLockWait(() => this.prepareNow(projectId, false, onProgress, scope))
      .catch((error: unknown) => {
        if (MnemoError.is(error, 'STORE_UNAVAILABLE') && /locked|busy/i.test(error.message)) return undefined
        throw error
      })
      .finally(() => this.pending.delete(key))
    this.pending.set(key, run)
    return await run
  }

  private async prepareNow(
    projectId: ProjectId,
    force: boolean,
    onProgress: ((done: number, total: number) => void) | undefined,
    scope: Omit<Scope, 'projectIds'>,
  ): Promise<Prepared | undefined> {
    const count = await this.store.countDocs({ projectIds: [projectId] })
    let stored = await this.store.lsaModelInfo(projectId)
    let model = stored ? await this.decoded(projectId, stored.space) : undefined
    if (force || !stored || !model || count > Math.max(stored.docCount * LSA_REFIT_GROWTH, stored.docCount + 20)) {
      const fitted = fitLsa(await this.store.projectTexts(projectId, LSA_MAX_TRAIN_DOCS), LSA_DIM)
      if (!fitted) return undefined
      const builtAt = this.clock.now()
      const space = `lsa:${projectId}:${builtAt}`
      if (stored) {
        await this.store.dropSpace(stored.space)
        for (const key of this.cache.keys()) if (key.startsWith(`${stored.space}|`)) this.cache.delete(key)
        this.models.delete(stored.space)
      }
      await this.store.putLsaModel(projectId, { space, docCount: count, builtAt, model: serializeLsa(fitted) })
      stored = { space, docCount: count, builtAt }
      model = fitted
      this.models.set(space, fitted)
    }
    const space = stored.space
    let added = 0
    for (;;) {
      const missing = await this.store.docsWithoutVector(space, { projectIds: [projectId] }, 2000)
      if (missing.length === 0) break
      await this.store.putVectors(
        space,
        missing.map((d) => ({ docKey: d.docKey, vec: embedLsa(model!, d.text) })),
      )
      added += missing.length
      onProgress?.(added, count)
    }
    // One matrix per user and agent scope: a search only ever sees the scope's vectors. A matrix is reused while the
    // project holds the documents it was read with: another process (a server replica, the CLI) may have added
    // documents and embedded them itself (nothing was `added` here), or deleted some, and the count says so.
    const cacheKey = `${space}|${scopeKey(scope)}`
    const cached = this.cache.get(cacheKey)
    if (cached && added === 0 && cached.docCount === count) return cached
    if (added > 0 || (cached && cached.docCount !== count))
      for (const key of this.cache.keys()) if (key.startsWith(`${space}|`)) this.cache.delete(key)
    const prepared = {
      space,
      model,
      matrix: new VectorMatrix(await this.store.vectors(space, { ...scope, projectIds: [projectId] }), model.dim),
      docCount: count,
    }
    this.cache.set(cacheKey, prepared)
    return prepared
  }

  /** The decoded model of `space`, read and decoded only the first time (another process may have refitted: a new space). */
  private async decoded(projectId: ProjectId, space: string): Promise<LsaModel | undefined> {
    const known = this.models.get(space)
    if (known) return known
    const stored = await this.store.getLsaModel(projectId)
    const model = stored && stored.space === space ? deserializeLsa(stored.model) : undefined
    if (model) {
      // A fit made elsewhere replaced this project's model: the older ones are not searched again, and their vectors go
      // (a fit of this process that lost a race with another's left its vectors in a space no model names).
      for (const key of [...this.models.keys()]) {
        if (!key.startsWith(`lsa:${projectId}:`)) continue
        this.models.delete(key)
        await this.store.dropSpace(key)
        for (const k of this.cache.keys()) if (k.startsWith(`${key}|`)) this.cache.delete(k)
      }
      this.models.set(space, model)
    }
    return model
  }

  /**
   * Top `k` documents of the scope's projects (every project when it names none) by cosine similarity to `query`
   * (per-project models; scores merged). With `keep`, the top `k` of the documents it keeps: a matrix holds every
   * document of its scope (it is cached across recalls, whatever each asks for), so the documents a recall may not
   * return are left out here, before the cut — `keep` is asked about the best `k`, then the best 4k, 16k, … while
   * fewer than `k` were kept and the matrix has more.
   *
   * @param keep - The keys of a batch (best first) that the recall may return.
   */
  async search(
    query: string,
    scope: Scope,
    k: number,
    keep?: (keys: readonly number[]) => Promise<ReadonlySet<number>>,
  ): Promise<{ key: number; score: number }[]> {
    const projects = scope.projectIds && scope.projectIds.length > 0 ? scope.projectIds : (await this.store.listProjects()).map((p) => p.id)
    const { projectIds: _all, ...who } = scope
    const out: { key: number; score: number }[] = []
    for (const p of projects) {
      const prepared = await this.prepare(p, false, undefined, who)
      if (!prepared) continue
      const q = embedLsa(prepared.model, query)
      for (let want = k; ; want *= 4) {
        const top = prepared.matrix.topK(q, want)
        const kept = keep ? await keep(top.map((h) => h.key)) : undefined
        const hits = kept ? top.filter((h) => kept.has(h.key)) : top
        if (!kept || hits.length >= k || top.length < want) {
          out.push(...hits.slice(0, k))
          break
        }
      }
    }
    return out.sort((a, b) => b.score - a.score || a.key - b.key).slice(0, k)
  }
}

/** The part of a cache key that names whose vectors a matrix holds (user and agent of the scope). */
function scopeKey(scope: Omit<Scope, 'projectIds'>): string {
  return `${scope.user === undefined ? '*' : (scope.user ?? '')}|${scope.agent ?? '*'}`
}
