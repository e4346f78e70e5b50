/**
 * An {@link Embedder} that runs a sentence-embedding model in-process with
 * transformers.js (`@huggingface/transformers`, ONNX Runtime on the CPU).
 *
 * transformers.js is not a dependency of mnemo (with ONNX Runtime it is about 430 MB, for an embedder
 * that is off by default): the user installs it when they configure `MNEMO_EMBEDDER=local`
 * (`transformersInstallCommand()`). It is imported only when the first text is embedded, so mnemo
 * installs and runs without it.
 */
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import { MnemoError } from '../core/errors.js'
import { normalizeInPlace, type Embedder } from './embedder.js'

/** The model used when neither `model` nor `modelPath` is given (384 dimensions). */
const DEFAULT_LOCAL_MODEL = 'Xenova/all-MiniLM-L6-v2'

/** The optional package this embedder needs. */
export const TRANSFORMERS_PACKAGE = '@huggingface/transformers'

/** The transformers.js version the local embedder is tested with; what the install command names. */
const TRANSFORMERS_VERSION = '4.3.2'

/**
 * The command that installs transformers.js beside mnemo (it is not installed with mnemo: with ONNX
 * Runtime it is about 430 MB): run in mnemo's package folder, without changing its package.json.
 */
function transformersInstallCommand(): string {
  const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/[\\/]$/, '')
  return `cd ${JSON.stringify(root)} && npm install --no-save ${TRANSFORMERS_PACKAGE}@${TRANSFORMERS_VERSION}`
}

/** Options of {@link createLocalEmbedder}. */
interface LocalEmbedderOptions {
  /**
   * Hugging Face model id (default `Xenova/all-MiniLM-L6-v2`), downloaded on
   * first use into the cache. With `modelPath` it is only the name recorded in
   * `model` and `spaceId` (default: the folder's name).
   */
  model?: string
  /**
   * A folder holding the model (`config.json`, `tokenizer.json`,
   * `tokenizer_config.json`, `onnx/model.onnx`), for users who copied it.
   * The model is then loaded from this folder only and never from the network.
   */
  modelPath?: string
  /** Where downloaded model files are cached (default: transformers.js's own cache folder). */
  cacheDir?: string
  /** How token vectors become one text vector: `mean` over real tokens (default) or the first (`cls`) token. */
  pooling?: 'mean' | 'cls'
  /** Prepended to every query text (default none; `query: ` for E5 models, `search_query: ` for nomic). */
  queryPrefix?: string
  /** Prepended to every stored text (default none; `passage: ` for E5 models, `search_document: ` for nomic). */
  documentPrefix?: string
  /** Most texts per model run (default 32): bounds the padded batch held in memory. */
  batchSize?: number
}

/** The part of a transformers.js feature-extraction pipeline this embedder uses. */
interface FeatureExtractor {
  (texts: string[], options: { pooling: 'mean' | 'cls'; normalize: boolean }): Promise<{ dims: readonly number[]; data: ArrayLike<number> }>
  dispose?(): Promise<unknown>
}

/** The part of the `@huggingface/transformers` module this embedder uses. */
interface TransformersModule {
  pipeline(task: 'feature-extraction', model: string, options: Record<string, unknown>): Promise<unknown>
}

const PROVIDER = 'local'

function providerError(message: string, cause?: unknown, hint?: string): MnemoError<'PROVIDER_FAILED'> {
  return new MnemoError('PROVIDER_FAILED', message, {
    details: { provider: PROVIDER },
    ...(cause === undefined ? {} : { cause }),
    ...(hint === undefined ? {} : { hint }),
  })
}

/**
 * Imports transformers.js with a dynamic `import()`; the module specifier is
 * a parameter so no static import (nor type reference) ties mnemo to the
 * optional package.
 *
 * @param specifier - module to import (default `@huggingface/transformers`).
 * @throws {MnemoError} `PROVIDER_FAILED` (`details.provider: 'local'`): when the package is
 *   not installed, with the message `the local embedder needs @huggingface/transformers:
 *   npm install @huggingface/transformers`; when it is installed but fails to load
 *   (for example a missing ONNX Runtime binary), with that error's text. `cause` is the import error.
 */
export async function importTransformers(specifier: string = TRANSFORMERS_PACKAGE): Promise<TransformersModule> {
  let loaded: unknown
  try {
    loaded = await import(specifier)
  } catch (error) {
    const code = (error as { code?: unknown }).code
    const missing = (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String((error as Error).message).includes(specifier)
    if (missing) {
      throw providerError(
        `MNEMO_EMBEDDER=local needs ${TRANSFORMERS_PACKAGE}, which is not installed (it is an opt-in install, not part of npm ci)`,
        error,
        `install it: ${transformersInstallCommand()} — or set MNEMO_EMBEDDER=openai, or unset it (the builtin vector channel needs no package)`,
      )
    }
    throw providerError(
      `the local embedder could not load ${TRANSFORMERS_PACKAGE}: ${(error as Error).message ?? String(error)}`,
      error,
      `reinstall it: ${transformersInstallCommand()}`,
    )
  }
  if (typeof (loaded as Partial<TransformersModule>).pipeline !== 'function') {
    throw providerError(`the local embedder loaded ${specifier}, but it has no pipeline() function`)
  }
  return loaded as TransformersModule
}

/**
 * Creates an embedder running a transformers.js `feature-extraction`
 * pipeline. Nothing is loaded until the first `embed` call, which imports
 * transformers.js and loads the model (downloading it into the cache when it
 * is a hub id not cached yet); later calls reuse the loaded model.
 *
 * - `embed(texts, kind)` prepends `queryPrefix` or `documentPrefix`, runs the
 *   model in batches of `batchSize` with the configured pooling and
 *   normalisation, and returns one unit-length `Float32Array` per text, in order.
 *   Texts longer than the model's `model_max_length` tokens are truncated.
 * - `dimension()` and the dimension in `spaceId` (`local:<model>:<dim>`, `?`
 *   until known) come from the model's output on the first call.
 * - With `modelPath`, the model id handed to transformers.js is the folder's
 *   absolute path and `local_files_only` is set: transformers.js never builds
 *   a hub URL for a path, so loading never touches the network, and no
 *   process-wide transformers.js setting (`env`) is changed.
 * - `close()` releases the ONNX Runtime session; a later `embed` loads the model again.
 *
 * @throws {MnemoError} `PROVIDER_FAILED` (`details.provider: 'local'`) from `embed`: the
 *   package is missing (message `the local embedder needs @huggingface/transformers:
 *   npm install @huggingface/transformers`), the model cannot be loaded (not found,
 *   no network for a download, a bad file), or a run fails; `cause` holds the
 *   transformers.js error. A failed load is retried on the next call. Invalid
 *   options throw `PROVIDER_FAILED` from this function itself.
 */
export function createLocalEmbedder(options: LocalEmbedderOptions = {}): Embedder {
  const modelPath = options.modelPath === undefined ? undefined : path.resolve(options.modelPath)
  const model = options.model ?? (modelPath === undefined ? DEFAULT_LOCAL_MODEL : path.basename(modelPath))
  const source = modelPath ?? model
  const pooling = options.pooling ?? 'mean'
  const queryPrefix = options.queryPrefix ?? ''
  const documentPrefix = options.documentPrefix ?? ''
  const batchSize = options.batchSize ?? 32
  if (model.trim() === '') throw providerError('local embedder: model must not be empty')
  if (pooling !== 'mean' && pooling !== 'cls')
    throw providerError(`local embedder: pooling must be 'mean' or 'cls', got ${String(pooling)}`)
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw providerError(`local embedder: batchSize must be a positive integer, got ${batchSize}`)

  let dimension: number | undefined
  let loading: Promise<FeatureExtractor> | undefined

  async function load(): Promise<FeatureExtractor> {
    const transformers = await importTransformers()
    const pipelineOptions: Record<string, unknown> = {}
    if (options.cacheDir !== undefined) pipelineOptions.cache_dir = path.resolve(options.cacheDir)
    if (modelPath !== undefined) pipelineOptions.local_files_only = true
    try {
      const extractor = await transformers.pipeline('feature-extraction', source, pipelineOptions)
      if (typeof extractor !== 'function') throw new Error('pipeline() did not return a callable pipeline')
      return extractor as FeatureExtractor
    } catch (error) {
      const where = modelPath === undefined ? `model ${model}` : `the model in ${modelPath}`
      throw providerError(
        `local embedder: could not load ${where}: ${(error as Error).message ?? String(error)}`,
        error,
        modelPath === undefined
          ? 'the first use downloads the model from the Hugging Face hub; without network access, copy the model folder and set modelPath'
          : 'the folder needs config.json, tokenizer.json, tokenizer_config.json and onnx/model.onnx',
      )
    }
  }

  function extractor(): Promise<FeatureExtractor> {
    if (loading === undefined) {
      const attempt = load()
      loading = attempt
      // a failed load is forgotten so the next call tries again (after an install, a copy, network)
      attempt.catch(() => {
        if (loading === attempt) loading = undefined
      })
    }
    return loading
  }

  async function run(run: FeatureExtractor, batch: string[]): Promise<Float32Array[]> {
    let output: { dims: readonly number[]; data: ArrayLike<number> }
    try {
      output = await run(batch, { pooling, normalize: true })
    } catch (error) {
      throw providerError(
        `local embedder: model ${model} failed to embed ${batch.length} texts: ${(error as Error).message ?? String(error)}`,
        error,
      )
    }
    const [rows, width] = output.dims
    if (output.dims.length !== 2 || rows !== batch.length || width === undefined || width < 1 || output.data.length !== rows * width) {
      throw providerError(`local embedder: model ${model} returned a tensor of shape [${output.dims.join(', ')}] for ${batch.length} texts`)
    }
    if (dimension !== undefined && width !== dimension) {
      throw providerError(`local embedder: model ${model} returned dimension ${width}, expected ${dimension}`)
    }
    const vectors: Float32Array[] = []
    for (let r = 0; r < rows; r++) {
      const v = new Float32Array(width)
      for (let c = 0; c < width; c++) v[c] = output.data[r * width + c]!
      vectors.push(normalizeInPlace(v))
    }
    dimension ??= width
    return vectors
  }

  return {
    provider: PROVIDER,
    model,
    get spaceId() {
      return `${PROVIDER}:${model}:${dimension ?? '?'}`
    },
    dimension: () => dimension,
    async embed(texts, kind) {
      if (texts.length === 0) return []
      const prefix = kind === 'query' ? queryPrefix : documentPrefix
      const pipeline = await extractor()
      const out: Float32Array[] = []
      for (let start = 0; start < texts.length; start += batchSize) {
        out.push(
          ...(await run(
            pipeline,
            texts.slice(start, start + batchSize).map((t) => prefix + t),
          )),
        )
      }
      return out
    },
    async close() {
      const current = loading
      loading = undefined
      if (current === undefined) return
      const pipeline = await current.catch(() => undefined)
      await pipeline?.dispose?.()
    },
  }
}
