import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MnemoError } from '../core/errors.js'
import { tempDir } from '../testing/test-mnemo.js'
import { writeTinyBertModel, type TinyBertModel } from '../testing/tiny-onnx-model.js'
import type { Embedder } from './embedder.js'
import { createLocalEmbedder, importTransformers, TRANSFORMERS_PACKAGE } from './local-embedder.js'

/** transformers.js is an opt-in install (not in package.json): the model tests need it installed and loadable, and skip otherwise. */
const runtime = await importTransformers().then(
  () => ({ available: true, reason: '' }),
  (error: unknown) => ({ available: false, reason: (error as Error).message }),
)

async function providerFailure(promise: Promise<unknown>): Promise<MnemoError<'PROVIDER_FAILED'>> {
  try {
    await promise
  } catch (error) {
    if (MnemoError.is(error, 'PROVIDER_FAILED')) return error
    throw error
  }
  throw new Error('expected PROVIDER_FAILED, but the call succeeded')
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0)
const norm = (v: Float32Array) => Math.sqrt(dot(v, v))

describe('importTransformers', () => {
  it('names the package to install when it is missing', async () => {
    const error = await providerFailure(importTransformers('@mnemo-test/no-such-package'))
    // An opt-in install (not part of npm ci): the hint is the exact command, with the tested version (issue 17 item 19).
    expect(error.message).toBe(
      'MNEMO_EMBEDDER=local needs @huggingface/transformers, which is not installed (it is an opt-in install, not part of npm ci)',
    )
    expect(error.hint).toMatch(/^install it: cd ".+" && npm install --no-save @huggingface\/transformers@4\.3\.2 — /)
    expect(error.details).toEqual({ provider: 'local' })
    expect(error.cause).toBeInstanceOf(Error)
  })
})

describe('createLocalEmbedder options', () => {
  it('names the model and has no dimension before the first call', () => {
    const embedder = createLocalEmbedder()
    expect(embedder).toMatchObject({ provider: 'local', model: 'Xenova/all-MiniLM-L6-v2', spaceId: 'local:Xenova/all-MiniLM-L6-v2:?' })
    expect(embedder.dimension()).toBeUndefined()
    expect(createLocalEmbedder({ modelPath: '/models/my-minilm' }).model).toBe('my-minilm')
    expect(createLocalEmbedder({ modelPath: '/models/copy', model: 'Xenova/all-MiniLM-L6-v2' }).model).toBe('Xenova/all-MiniLM-L6-v2')
  })

  it('rejects bad options up front', () => {
    expect(() => createLocalEmbedder({ batchSize: 0 })).toThrow(/batchSize/)
    expect(() => createLocalEmbedder({ pooling: 'max' as 'mean' })).toThrow(/pooling/)
  })

  it('embeds nothing without loading anything', async () => {
    expect(await createLocalEmbedder({ modelPath: '/nonexistent/model' }).embed([], 'query')).toEqual([])
  })
})

describe.skipIf(!runtime.available)(
  `local embedder on a generated tiny BERT model (needs @huggingface/transformers + onnxruntime-node${runtime.available ? '' : `; skipped: ${runtime.reason}`})`,
  () => {
    let model: TinyBertModel
    let cleanup: () => void
    const embedders: Embedder[] = []
    // a loopback stand-in for the model hub: any request to it means loading went remote
    let hub: Server
    let hubRequests = 0
    let restoreEnv: () => void

    const open = (options: Parameters<typeof createLocalEmbedder>[0] = {}) => {
      const embedder = createLocalEmbedder({ modelPath: model.dir, ...options })
      embedders.push(embedder)
      return embedder
    }

    beforeAll(async () => {
      const tmp = tempDir('mnemo-tiny-model-')
      cleanup = tmp.cleanup
      model = await writeTinyBertModel(path.join(tmp.dir, 'tiny-bert'), { hiddenSize: 16, seed: 7 })
      hub = createServer((_req, res) => {
        hubRequests++
        res.writeHead(404).end()
      })
      await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve))
      const { env } = (await import(TRANSFORMERS_PACKAGE)) as { env: { remoteHost: string } }
      const before = env.remoteHost
      env.remoteHost = `http://127.0.0.1:${(hub.address() as AddressInfo).port}/`
      restoreEnv = () => {
        env.remoteHost = before
      }
    })

    afterAll(async () => {
      for (const e of embedders) await e.close?.()
      restoreEnv?.()
      hub?.closeAllConnections()
      await new Promise<void>((resolve) => (hub ? hub.close(() => resolve()) : resolve()))
      cleanup?.()
    })

    it('returns unit vectors of the model’s hidden size, and learns the dimension', async () => {
      const embedder = open()
      expect(embedder.spaceId).toBe('local:tiny-bert:?')
      const vectors = await embedder.embed(['the cache is warm', 'Fix the flaky login test!', 'x'], 'document')
      expect(vectors).toHaveLength(3)
      for (const v of vectors) {
        expect(v).toBeInstanceOf(Float32Array)
        expect(v).toHaveLength(model.hiddenSize)
        expect(norm(v)).toBeCloseTo(1, 5)
      }
      expect(embedder.dimension()).toBe(model.hiddenSize)
      expect(embedder.spaceId).toBe(`local:tiny-bert:${model.hiddenSize}`)
    })

    it('gives identical texts identical vectors and different texts different ones', async () => {
      const embedder = open()
      const [a1, b, a2] = await embedder.embed(
        ['rate limit the orders api', 'migrate the database schema', 'rate limit the orders api'],
        'document',
      )
      const [a3] = await embedder.embed(['rate limit the orders api'], 'document')
      expect(Array.from(a2!)).toEqual(Array.from(a1!))
      expect(Array.from(a3!)).toEqual(Array.from(a1!).map((x) => expect.closeTo(x, 6)))
      expect(dot(a1!, b!)).toBeLessThan(0.999)
    })

    it('applies the query and document prefixes', async () => {
      const plain = open()
      const prefixed = open({ queryPrefix: 'query: ', documentPrefix: 'passage: ' })
      const [asQuery] = await prefixed.embed(['where is the retry logic'], 'query')
      const [asDocument] = await prefixed.embed(['where is the retry logic'], 'document')
      const [expectedQuery, expectedDocument, bare] = await plain.embed(
        ['query: where is the retry logic', 'passage: where is the retry logic', 'where is the retry logic'],
        'document',
      )
      expect(Array.from(asQuery!)).toEqual(Array.from(expectedQuery!).map((x) => expect.closeTo(x, 6)))
      expect(Array.from(asDocument!)).toEqual(Array.from(expectedDocument!).map((x) => expect.closeTo(x, 6)))
      expect(dot(asQuery!, asDocument!)).toBeLessThan(0.999)
      expect(dot(asQuery!, bare!)).toBeLessThan(0.999)
      // without prefixes, the kind changes nothing
      const [plainQuery] = await plain.embed(['where is the retry logic'], 'query')
      expect(Array.from(plainQuery!)).toEqual(Array.from(bare!).map((x) => expect.closeTo(x, 6)))
    })

    it('batches without changing results, and truncates long texts', async () => {
      const texts = ['one', 'two words', 'three little words', 'a b c d e f g h', 'z', 'long '.repeat(500)]
      const batched = await open({ batchSize: 2 }).embed(texts, 'document')
      const whole = await open({ batchSize: 100 }).embed(texts, 'document')
      expect(batched).toHaveLength(texts.length)
      for (const [i, v] of batched.entries()) expect(Array.from(v)).toEqual(Array.from(whole[i]!).map((x) => expect.closeTo(x, 5)))
    })

    it('supports cls pooling', async () => {
      const [mean] = await open().embed(['pooling choice'], 'document')
      const [cls] = await open({ pooling: 'cls' }).embed(['pooling choice'], 'document')
      expect(cls).toHaveLength(model.hiddenSize)
      expect(norm(cls!)).toBeCloseTo(1, 5)
      expect(dot(mean!, cls!)).toBeLessThan(0.999)
    })

    it('reloads after close()', async () => {
      const embedder = open()
      const [before] = await embedder.embed(['same text'], 'query')
      await embedder.close?.()
      const [after] = await embedder.embed(['same text'], 'query')
      expect(Array.from(after!)).toEqual(Array.from(before!))
    })

    it('fails with PROVIDER_FAILED for a folder without a model, without going to the network', async () => {
      const missing = tempDir('mnemo-no-model-')
      try {
        const error = await providerFailure(createLocalEmbedder({ modelPath: missing.dir }).embed(['x'], 'query'))
        expect(error.details).toEqual({ provider: 'local' })
        expect(error.message).toContain(missing.dir)
        expect(error.cause).toBeInstanceOf(Error)
      } finally {
        missing.cleanup()
      }
    })

    it('never contacted the model hub', () => {
      expect(hubRequests).toBe(0)
    })
  },
)
