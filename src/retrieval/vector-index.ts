/**
 * Exact nearest-neighbour search over unit-length vectors: one contiguous
 * Float32Array, dot products, and a bounded min-heap for the top k. Exact
 * search is fast enough for a single project's documents (≈100k × 128
 * dimensions is 12.8M multiply-adds, a few ms); no ANN index is needed at
 * that size.
 */
export class VectorMatrix {
  readonly keys: Int32Array | Float64Array
  readonly data: Float32Array
  readonly dim: number

  constructor(rows: readonly { docKey: number; vec: Float32Array }[], dim: number) {
    this.dim = dim
    const usable = rows.filter((r) => r.vec.length === dim)
    this.keys = Float64Array.from(usable.map((r) => r.docKey))
    this.data = new Float32Array(usable.length * dim)
    for (const [i, r] of usable.entries()) this.data.set(r.vec, i * dim)
  }

  get size(): number {
    return this.keys.length
  }

  /** The `k` rows most similar to `query` (cosine = dot product for unit vectors), best first; rows scoring <= 0 are left out. */
  topK(query: Float32Array, k: number): { key: number; score: number }[] {
    if (query.length !== this.dim || k <= 0) return []
    const heapKeys: number[] = []
    const heapScores: number[] = []
    const n = this.keys.length
    const d = this.dim
    for (let i = 0; i < n; i++) {
      let s = 0
      const base = i * d
      for (let j = 0; j < d; j++) s += this.data[base + j]! * query[j]!
      if (s <= 0) continue
      if (heapScores.length < k) {
        heapScores.push(s)
        heapKeys.push(this.keys[i]!)
        siftUp(heapScores, heapKeys, heapScores.length - 1)
      } else if (s > heapScores[0]!) {
        heapScores[0] = s
        heapKeys[0] = this.keys[i]!
        siftDown(heapScores, heapKeys, 0)
      }
    }
    return heapKeys.map((key, i) => ({ key, score: heapScores[i]! })).sort((a, b) => b.score - a.score || a.key - b.key)
  }
}

function siftUp(s: number[], k: number[], i: number): void {
  while (i > 0) {
    const p = (i - 1) >> 1
    if (s[p]! <= s[i]!) break
    swap(s, k, i, p)
    i = p
  }
}

function siftDown(s: number[], k: number[], i: number): void {
  for (;;) {
    const l = 2 * i + 1
    const r = l + 1
    let m = i
    if (l < s.length && s[l]! < s[m]!) m = l
    if (r < s.length && s[r]! < s[m]!) m = r
    if (m === i) return
    swap(s, k, i, m)
    i = m
  }
}

function swap(s: number[], k: number[], a: number, b: number): void {
  ;[s[a], s[b]] = [s[b]!, s[a]!]
  ;[k[a], k[b]] = [k[b]!, k[a]!]
}
