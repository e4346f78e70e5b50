import { describe, expect, it } from 'vitest'
import { defaultDataDir, parseRecallWeights, resolveConfig } from './config.js'

describe('resolveConfig', () => {
  it('resolves defaults from HOME', () => {
    const c = resolveConfig({ HOME: '/home/u' })
    expect(c).toMatchObject({
      home: '/home/u/.mnemo',
      dbPath: '/home/u/.mnemo/mnemo.db',
      contextBudgetTokens: 2000,
      recallWeights: {},
      embedder: undefined,
    })
  })
  it('reads every setting', () => {
    const c = resolveConfig({
      HOME: '/h',
      MNEMO_HOME: '~/m',
      MNEMO_CONTEXT_BUDGET: '800',
      MNEMO_RECALL_WEIGHTS: 'graph=0.2, vector=0.5',
      MNEMO_EMBEDDER: 'openai',
      MNEMO_EMBED_URL: 'http://127.0.0.1:11434/v1',
      MNEMO_EMBED_MODEL: 'nomic-embed-text',
      MNEMO_EMBED_DIM: '768',
      MNEMO_TZ: 'Europe/Berlin',
    })
    expect(c).toMatchObject({
      home: '/h/m',
      contextBudgetTokens: 800,
      recallWeights: { graph: 0.2, vector: 0.5 },
      embedder: { provider: 'openai', model: 'nomic-embed-text', url: 'http://127.0.0.1:11434/v1', dimensions: 768 },
      timeZone: 'Europe/Berlin',
    })
  })
  it('fails fast listing every bad key at once', () => {
    expect(() =>
      resolveConfig({
        HOME: '/h',
        MNEMO_HOME: ' ',
        MNEMO_CONTEXT_BUDGET: '50',
        MNEMO_RECALL_WEIGHTS: 'bm25=x',
        MNEMO_EMBEDDER: 'magic',
        MNEMO_TZ: 'Mars/Olympus',
      }),
    ).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        details: { keys: ['MNEMO_HOME', 'MNEMO_CONTEXT_BUDGET', 'MNEMO_RECALL_WEIGHTS', 'MNEMO_TZ', 'MNEMO_EMBEDDER'] },
      }),
    )
  })
  it('reads the user and agent scope, and refuses malformed ones', () => {
    expect(resolveConfig({ HOME: '/h' })).toMatchObject({ user: undefined, agentScope: 'shared' })
    expect(resolveConfig({ HOME: '/h', MNEMO_USER: 'alice@example.com', MNEMO_AGENT_SCOPE: 'own' })).toMatchObject({
      user: 'alice@example.com',
      agentScope: 'own',
      rerank: true,
    })
    expect(resolveConfig({ HOME: '/h', MNEMO_RERANK: 'off' })).toMatchObject({ rerank: false })
    expect(() => resolveConfig({ HOME: '/h', MNEMO_RERANK: 'no' })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', details: { keys: ['MNEMO_RERANK'] } }),
    )
    expect(resolveConfig({ HOME: '/h' })).toMatchObject({ promptRecallTokens: 300 })
    expect(resolveConfig({ HOME: '/h', MNEMO_PROMPT_RECALL: 'off' }).promptRecallTokens).toBeUndefined()
    expect(resolveConfig({ HOME: '/h', MNEMO_PROMPT_RECALL: '500' })).toMatchObject({ promptRecallTokens: 500 })
    for (const v of ['50', '5000', 'lots'])
      expect(() => resolveConfig({ HOME: '/h', MNEMO_PROMPT_RECALL: v })).toThrow(
        expect.objectContaining({ code: 'CONFIG_INVALID', details: { keys: ['MNEMO_PROMPT_RECALL'] } }),
      )
    expect(resolveConfig({ HOME: '/h', MNEMO_USER: '' }).user).toBeUndefined()
    expect(() => resolveConfig({ HOME: '/h', MNEMO_USER: 'a/b', MNEMO_AGENT_SCOPE: 'private' })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', details: { keys: ['MNEMO_USER', 'MNEMO_AGENT_SCOPE'] } }),
    )
  })
  it('names each bad setting with its value and what it must be, and no other setting (issue 17 item 18)', () => {
    let error: unknown
    try {
      resolveConfig({ HOME: '/h', MNEMO_USER: 'bad user!' })
    } catch (e) {
      error = e
    }
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', details: { keys: ['MNEMO_USER'] } })
    const { message, hint } = error as { message: string; hint: string }
    expect(message).toBe('invalid configuration: MNEMO_USER="bad user!": must be 1–64 ASCII letters, digits or . _ @ + -')
    // The hint no longer lists every setting: only the bad one is named.
    expect(`${message} ${hint}`).not.toMatch(/MNEMO_TZ|MNEMO_RERANK|MNEMO_EMBEDDER/)
    // A missing key is said to be missing; a key's value is never printed.
    expect(() => resolveConfig({ HOME: '/h', MNEMO_LLM: 'anthropic' })).toThrow(
      'MNEMO_LLM_API_KEY is not set: must be set when MNEMO_LLM=anthropic',
    )
    expect(() => resolveConfig({ HOME: '/h', MNEMO_TZ: 'Mars/Olympus', MNEMO_RERANK: 'no' })).toThrow(
      'MNEMO_TZ="Mars/Olympus": must be an IANA time zone like Europe/Berlin; MNEMO_RERANK="no": must be on or off',
    )
  })
  it('parses recall weights strictly', () => {
    expect(parseRecallWeights('bm25=1,time=0')).toEqual({ bm25: 1, time: 0 })
    // The documented default (README) parses: every channel, the configured embedder's included.
    expect(parseRecallWeights('bm25=1,vector=0,embedding=1,graph=0.1,time=0.5')).toEqual({
      bm25: 1,
      vector: 0,
      embedding: 1,
      graph: 0.1,
      time: 0.5,
    })
    expect(parseRecallWeights('colour=1')).toBeUndefined()
    expect(parseRecallWeights('bm25=11')).toBeUndefined()
  })
})

describe('defaultDataDir', () => {
  it('names the files resolveConfig gives for HOME alone, whatever MNEMO_HOME and the other settings say', () => {
    for (const HOME of ['/home/ada', '/home/ada/', 'relative/home', undefined]) {
      const { home, dbPath, spoolDir, errorLogPath } = resolveConfig(HOME === undefined ? {} : { HOME })
      const env = { ...(HOME === undefined ? {} : { HOME }), MNEMO_HOME: '/srv/mnemo', MNEMO_CONTEXT_BUDGET: 'lots' }
      expect(defaultDataDir(env)).toEqual({ home, dbPath, spoolDir, errorLogPath })
    }
  })
})
