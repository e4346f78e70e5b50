import { stemmer } from 'stemmer'
import { STOP_WORDS } from './fts-query.js'
import { cjkBigrams, hasCjk, searchForm, splitIdentifier } from './search-text.js'

/**
 * mnemo's builtin embedder: Latent Semantic Analysis (Deerwester et al.,
 * 1990) learned from the user's own store, no download. Documents become
 * log-TF·IDF vectors over stemmed terms; a truncated SVD of that matrix,
 * computed with the randomized range finder of Halko, Martinsson & Tropp
 * ("Finding structure with randomness", SIAM Review 2011: oversampling 10,
 * 2 power iterations), gives term loadings V; a text's embedding is its
 * TF·IDF vector times V, L2-normalised, so texts that use related words
 * land close even without shared terms. Deterministic (seeded).
 */
export interface LsaModel {
  /** Stemmed term → column. */
  vocab: Map<string, number>
  /** IDF per column: ln(N / df). */
  idf: Float32Array
  /** Term loadings, row-major [terms × dim]. */
  loadings: Float32Array
  dim: number
  /** Documents the model was fitted on. */
  docCount: number
}

/** Stemmed content terms of `text` in `searchForm` (NFKC): lowercase words, identifier parts, CJK bigrams; stop words out. */
export function lsaTerms(raw: string): string[] {
  const text = searchForm(raw)
  const source = hasCjk(text) ? cjkBigrams(text) : text
  const out: string[] = []
  for (const raw of source.match(/[\p{L}\p{N}_]+/gu) ?? []) {
    const parts = /[a-z][A-Z]/.test(raw) ? [raw.toLowerCase(), ...splitIdentifier(raw)] : [raw.toLowerCase()]
    for (const w of parts) {
      if (w.length < 2 || STOP_WORDS.has(w) || /^\d+$/.test(w)) continue
      out.push(/^[a-z]+$/.test(w) ? stemmer(w) : w)
    }
  }
  return out
}

function seededGaussian(seed: number): () => number {
  let s = seed >>> 0
  const next = (): number => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return (s + 0.5) / 4294967296
  }
  return () => Math.sqrt(-2 * Math.log(next())) * Math.cos(2 * Math.PI * next())
}

type Sparse = { cols: Int32Array; vals: Float32Array }

function tfidf(terms: readonly string[], vocab: Map<string, number>, idf: Float32Array): Sparse {
  const counts = new Map<number, number>()
  for (const t of terms) {
    const c = vocab.get(t)
    if (c !== undefined) counts.set(c, (counts.get(c) ?? 0) + 1)
  }
  const cols = new Int32Array(counts.size)
  const vals = new Float32Array(counts.size)
  let i = 0
  let norm = 0
  for (const [c, n] of counts) {
    cols[i] = c
    vals[i] = (1 + Math.log(n)) * idf[c]!
    norm += vals[i]! * vals[i]!
    i++
  }
  norm = Math.sqrt(norm) || 1
  for (let j = 0; j < vals.length; j++) vals[j]! /= norm
  return { cols, vals }
}

/** Orthonormalises the columns of an [rows × l] row-major matrix in place (modified Gram–Schmidt). */
function orthonormalize(m: Float64Array, rows: number, l: number): void {
  for (let j = 0; j < l; j++) {
    for (let p = 0; p < j; p++) {
      let d = 0
      for (let i = 0; i < rows; i++) d += m[i * l + j]! * m[i * l + p]!
      for (let i = 0; i < rows; i++) m[i * l + j]! -= d * m[i * l + p]!
    }
    let n = 0
    for (let i = 0; i < rows; i++) n += m[i * l + j]! ** 2
    n = Math.sqrt(n) || 1
    for (let i = 0; i < rows; i++) m[i * l + j]! /= n
  }
}

/** Eigen-decomposition of a small symmetric matrix by cyclic Jacobi rotations. */
function symmetricEigen(a: Float64Array, n: number): { values: Float64Array; vectors: Float64Array } {
  const v = new Float64Array(n * n)
  for (let i = 0; i < n; i++) v[i * n + i] = 1
  for (let sweep = 0; sweep < 60; sweep++) {
    let off = 0
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) off += a[i * n + j]! ** 2
    if (off < 1e-20) break
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p * n + q]!
        if (Math.abs(apq) < 1e-18) continue
        const theta = (a[q * n + q]! - a[p * n + p]!) / (2 * apq)
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1))
        const c = 1 / Math.sqrt(t * t + 1)
        const s = t * c
        for (let k = 0; k < n; k++) {
          const akp = a[k * n + p]!
          const akq = a[k * n + q]!
          a[k * n + p] = c * akp - s * akq
          a[k * n + q] = s * akp + c * akq
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p * n + k]!
          const aqk = a[q * n + k]!
          a[p * n + k] = c * apk - s * aqk
          a[q * n + k] = s * apk + c * aqk
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k * n + p]!
          const vkq = v[k * n + q]!
          v[k * n + p] = c * vkp - s * vkq
          v[k * n + q] = s * vkp + c * vkq
        }
      }
    }
  }
  const values = new Float64Array(n)
  for (let i = 0; i < n; i++) values[i] = a[i * n + i]!
  return { values, vectors: v }
}

/**
 * Fits an LSA model on `texts`. Terms seen in fewer than 2 documents are
 * dropped (they cannot relate documents). Returns `undefined` when the
 * corpus is too small to say anything (fewer than 8 documents or 8 terms).
 *
 * @param dim - Embedding dimension, default 128 (capped by the corpus size).
 */
export function fitLsa(texts: readonly string[], dim = 128, seed = 1): LsaModel | undefined {
  const docs = texts.map(lsaTerms)
  const df = new Map<string, number>()
  for (const d of docs) for (const t of new Set(d)) df.set(t, (df.get(t) ?? 0) + 1)
  const vocab = new Map<string, number>()
  for (const [t, n] of df) if (n >= 2 && n < docs.length) vocab.set(t, vocab.size)
  const nTerms = vocab.size
  if (docs.length < 8 || nTerms < 8) return undefined
  const idf = new Float32Array(nTerms)
  for (const [t, c] of vocab) idf[c] = Math.log(docs.length / df.get(t)!)
  const rows = docs.map((d) => tfidf(d, vocab, idf))
  const k = Math.max(2, Math.min(dim, docs.length - 1, nTerms - 1))
  const l = Math.min(k + 10, docs.length, nTerms)
  const n = rows.length
  const gauss = seededGaussian(seed)
  // Y = X·Ω, then power iterations Y = X·(Xᵀ·Y), orthonormalising in between.
  const mulX = (m: Float64Array): Float64Array => {
    const y = new Float64Array(n * l)
    rows.forEach((r, i) => {
      for (let z = 0; z < r.cols.length; z++) {
        const c = r.cols[z]!
        const w = r.vals[z]!
        for (let j = 0; j < l; j++) y[i * l + j]! += w * m[c * l + j]!
      }
    })
    return y
  }
  const mulXt = (y: Float64Array): Float64Array => {
    const z = new Float64Array(nTerms * l)
    rows.forEach((r, i) => {
      for (let q = 0; q < r.cols.length; q++) {
        const c = r.cols[q]!
        const w = r.vals[q]!
        for (let j = 0; j < l; j++) z[c * l + j]! += w * y[i * l + j]!
      }
    })
    return z
  }
  const omega = new Float64Array(nTerms * l)
  for (let i = 0; i < omega.length; i++) omega[i] = gauss()
  let y = mulX(omega)
  orthonormalize(y, n, l)
  for (let it = 0; it < 2; it++) {
    const z = mulXt(y)
    orthonormalize(z, nTerms, l)
    y = mulX(z)
    orthonormalize(y, n, l)
  }
  const bt = mulXt(y) // [terms × l] = (Qᵀ X)ᵀ
  const c = new Float64Array(l * l)
  for (let t = 0; t < nTerms; t++) {
    for (let i = 0; i < l; i++) {
      const bi = bt[t * l + i]!
      if (bi === 0) continue
      for (let j = 0; j < l; j++) c[i * l + j]! += bi * bt[t * l + j]!
    }
  }
  const { values, vectors } = symmetricEigen(c, l)
  const order = [...values.keys()].sort((a, b) => values[b]! - values[a]!).slice(0, k)
  const loadings = new Float32Array(nTerms * k)
  order.forEach((col, j) => {
    const sigma = Math.sqrt(Math.max(values[col]!, 0))
    if (sigma === 0) return
    for (let t = 0; t < nTerms; t++) {
      let d = 0
      for (let i = 0; i < l; i++) d += bt[t * l + i]! * vectors[i * l + col]!
      loadings[t * k + j] = d / sigma
    }
  })
  return { vocab, idf, loadings, dim: k, docCount: docs.length }
}

/** The unit-length embedding of `text` under `model` (all zeros when it shares no term with the model). */
export function embedLsa(model: LsaModel, text: string): Float32Array {
  const v = tfidf(lsaTerms(text), model.vocab, model.idf)
  const out = new Float32Array(model.dim)
  for (let z = 0; z < v.cols.length; z++) {
    const base = v.cols[z]! * model.dim
    const w = v.vals[z]!
    for (let j = 0; j < model.dim; j++) out[j]! += w * model.loadings[base + j]!
  }
  let norm = 0
  for (let j = 0; j < out.length; j++) norm += out[j]! * out[j]!
  norm = Math.sqrt(norm)
  if (norm > 0) for (let j = 0; j < out.length; j++) out[j]! /= norm
  return out
}

/** Serialises a model for storage: a JSON header line (vocabulary, sizes), then IDF and loadings as little-endian float32. */
export function serializeLsa(model: LsaModel): Uint8Array {
  const terms = [...model.vocab.entries()].sort((a, b) => a[1] - b[1]).map(([t]) => t)
  const header = new TextEncoder().encode(`${JSON.stringify({ v: 1, dim: model.dim, docCount: model.docCount, terms })}\n`)
  const pad = (4 - (header.length % 4)) % 4
  const out = new Uint8Array(header.length + pad + (model.idf.length + model.loadings.length) * 4)
  out.set(header, 0)
  out.fill(32, header.length, header.length + pad)
  const floats = new Float32Array(out.buffer, header.length + pad, model.idf.length + model.loadings.length)
  floats.set(model.idf, 0)
  floats.set(model.loadings, model.idf.length)
  return out
}

/** Reads a model written by `serializeLsa`; `undefined` when the bytes are not one. */
export function deserializeLsa(bytes: Uint8Array): LsaModel | undefined {
  const nl = bytes.indexOf(10)
  if (nl < 0) return undefined
  try {
    const head = JSON.parse(new TextDecoder().decode(bytes.subarray(0, nl))) as {
      v: number
      dim: number
      docCount: number
      terms: string[]
    }
    if (head.v !== 1) return undefined
    let start = nl + 1
    while (start % 4 !== 0 && bytes[start] === 32) start++
    const copy = bytes.slice(start)
    const floats = new Float32Array(copy.buffer, 0, Math.floor(copy.byteLength / 4))
    const n = head.terms.length
    if (floats.length !== n + n * head.dim) return undefined
    return {
      vocab: new Map(head.terms.map((t, i) => [t, i])),
      idf: floats.slice(0, n),
      loadings: floats.slice(n),
      dim: head.dim,
      docCount: head.docCount,
    }
  } catch {
    return undefined
  }
}
