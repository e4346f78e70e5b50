/**
 * The port for text embedders that mnemo does not compute itself (neural
 * models, remote endpoints). mnemo's default vector channel (builtin LSA)
 * needs no embedder; a configured embedder adds a channel on top of it.
 */
export interface Embedder {
  /** Provider name: `local` (transformers.js) or `openai` (any OpenAI-compatible endpoint). */
  readonly provider: string
  /** Model name as the provider knows it (`Xenova/all-MiniLM-L6-v2`, `text-embedding-3-small`, `nomic-embed-text`). */
  readonly model: string
  /**
   * Identity of the vector space: provider, model and dimension
   * (`openai:text-embedding-3-small:1536`). Stored beside every vector, so a
   * switch of provider, model or dimension is detected and old vectors are
   * never compared with new ones.
   */
  readonly spaceId: string
  /** Vector length; known after the first call for providers that report it lazily. */
  dimension(): number | undefined
  /**
   * Embeds `texts` in order. Every returned vector is L2-normalised
   * (unit length), so cosine similarity is a dot product.
   *
   * @param kind - `query` for a search query, `document` for stored text (some models prefix them differently).
   * @throws {MnemoError} `PROVIDER_FAILED` — with the provider name and, for HTTP, the status; `cause` holds the vendor error.
   */
  embed(texts: readonly string[], kind: 'query' | 'document'): Promise<Float32Array[]>
  /** Releases model sessions or sockets. */
  close?(): Promise<void>
}

/** Scales `v` to unit length in place and returns it; a zero vector stays zero. */
export function normalizeInPlace(v: Float32Array): Float32Array {
  let sum = 0
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!
  const norm = Math.sqrt(sum)
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i]! /= norm
  return v
}
