import { hostTimeZone } from './time-zone.js'
import { USER_NAME_PATTERN } from '../core/user.js'
import os from 'node:os'
import path from 'node:path'
import { MnemoError } from '../core/errors.js'

/** Settings after defaults ← environment ← flags have been applied. */
export interface ResolvedConfig {
  /** Data directory (`MNEMO_HOME`, default `~/.mnemo`). */
  home: string
  /** SQLite database file inside `home`. */
  dbPath: string
  /** Folder where hooks leave events they could not store; drained by the next run. */
  spoolDir: string
  /** Append-only failure log read by `mnemo status`. */
  errorLogPath: string
  /** Default token budget of the context block. */
  contextBudgetTokens: number
  /** A neural embedder to use on top of the builtin channels, or undefined. */
  embedder: EmbedderConfig | undefined
  /** IANA time zone for day boundaries and relative dates (`MNEMO_TZ`); default the system's. */
  timeZone: string
  /** A model for the consolidation slow path, or undefined (deterministic only). */
  llm: LlmConfig | undefined
  /** Per-channel RRF weights that override the defaults (`MNEMO_RECALL_WEIGHTS=bm25=1,graph=0.2`). */
  recallWeights: Partial<Record<'bm25' | 'vector' | 'embedding' | 'graph' | 'time', number>>
  /**
   * The user this machine captures and reads for (`MNEMO_USER`): what it
   * writes carries the name; what it reads is that user's data plus shared
   * data (captured with no user). Unset (default): no user — everything is
   * shared, as on a one-person machine. See docs/THREAT-MODEL.md ("User scope").
   */
  user: string | undefined
  /**
   * `MNEMO_AGENT_SCOPE`: `shared` (default) — every agent of a project reads
   * what the others captured (cross-agent memory); `own` — hooks and MCP give
   * each agent only its own captures and memories, plus what a person stated.
   */
  agentScope: 'shared' | 'own'
  /** `MNEMO_RERANK`: `on` (default) — recall re-ranks the head of the fused list (src/retrieval/rerank.ts); `off` — the fused order. */
  rerank: boolean
  /**
   * `MNEMO_PROMPT_RECALL`: token budget of the block injected with each prompt and of file hints before a tool
   * touches a file (an integer 100–4000, default 300), or `off` (undefined here): hooks inject only at SessionStart.
   */
  promptRecallTokens: number | undefined
}

/** A configured neural embedder: `MNEMO_EMBEDDER`, `MNEMO_EMBED_MODEL`, `MNEMO_EMBED_URL`, `MNEMO_EMBED_API_KEY`, `MNEMO_EMBED_DIM`. */
export interface EmbedderConfig {
  provider: 'openai' | 'local'
  model: string
  /** OpenAI-compatible base URL (openai), or a folder holding the model (local). */
  url?: string
  apiKey?: string
  dimensions?: number
}

/** A configured LLM: `MNEMO_LLM` (openai | anthropic), `MNEMO_LLM_MODEL`, `MNEMO_LLM_URL`, `MNEMO_LLM_API_KEY`, `MNEMO_LLM_DAILY_TOKENS`. */
export interface LlmConfig {
  provider: 'openai' | 'anthropic'
  model: string
  url?: string
  apiKey?: string
  /** Tokens a day the slow path may spend (default 200 000); then it falls back to the deterministic path. */
  dailyTokens: number
}

/**
 * Parses `bm25=1,vector=0.5,embedding=1,graph=0,time=0.5` into channel weights.
 * Returns `undefined` when the text is malformed (a name not among the
 * channels, or a weight that is not a number in 0–10).
 */
export function parseRecallWeights(text: string): Partial<Record<'bm25' | 'vector' | 'embedding' | 'graph' | 'time', number>> | undefined {
  const out: Partial<Record<'bm25' | 'vector' | 'embedding' | 'graph' | 'time', number>> = {}
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0)) {
    const m = /^(bm25|vector|embedding|graph|time)\s*=\s*([0-9]*\.?[0-9]+)$/.exec(part)
    if (!m || Number(m[2]) > 10) return undefined
    out[m[1] as 'bm25'] = Number(m[2])
  }
  return out
}

/** Environment variables mnemo reads: `MNEMO_HOME`, `MNEMO_CONTEXT_BUDGET`, `MNEMO_RECALL_WEIGHTS`, `MNEMO_EMBEDDER` and `MNEMO_EMBED_*`, `MNEMO_TZ`, `MNEMO_USER`, `MNEMO_AGENT_SCOPE`, `MNEMO_RERANK`, `MNEMO_PROMPT_RECALL`, `MNEMO_SERVER_URL` (validated here, used by hooks), `HOME`. */
export type MnemoEnv = Readonly<Record<string, string | undefined>>

/** Default token budget of the injected context block. */
const DEFAULT_CONTEXT_BUDGET = 2000

/** Default address of `mnemo serve` (`--port` or `MNEMO_PORT`, and `--host`, choose another). */
export const DEFAULT_PORT = 7077
export const DEFAULT_HOST = '127.0.0.1'

/** The files of the data directory `home` (absolute): its database, spool and error log. */
function dataDirFiles(home: string): Pick<ResolvedConfig, 'home' | 'dbPath' | 'spoolDir' | 'errorLogPath'> {
  return {
    home,
    dbPath: path.join(home, 'mnemo.db'),
    spoolDir: path.join(home, 'spool'),
    errorLogPath: path.join(home, 'logs', 'errors.jsonl'),
  }
}

/**
 * The default data directory (`$HOME/.mnemo`, whatever `MNEMO_HOME` says) and its files, as `resolveConfig({ HOME })`
 * gives them, without resolving (and checking) the rest of the configuration: a hook's spool drain looks there for
 * events kept for its own data directory (see `Spool.adoptFrom`).
 *
 * @param env - Only `HOME` is read; absent: the OS's home directory.
 */
export function defaultDataDir(env: MnemoEnv = process.env): Pick<ResolvedConfig, 'home' | 'dbPath' | 'spoolDir' | 'errorLogPath'> {
  return dataDirFiles(path.resolve(path.join(env['HOME'] ?? os.homedir(), '.mnemo')))
}

/**
 * Resolves the configuration from the environment and flags. Paths are made
 * absolute; `~` at the start of `MNEMO_HOME` expands to the home directory.
 *
 * @throws {MnemoError} `CONFIG_INVALID` — listing every bad key at once (an empty `MNEMO_HOME`, a non-numeric budget).
 */
export function resolveConfig(env: MnemoEnv = process.env, flags: { home?: string } = {}): ResolvedConfig {
  const bad = badSettings()
  const homeDir = env['HOME'] ?? os.homedir()
  let home = flags.home ?? env['MNEMO_HOME'] ?? path.join(homeDir, '.mnemo')
  if (home.trim().length === 0) {
    bad.push('MNEMO_HOME', flags.home ?? env['MNEMO_HOME'])
    home = path.join(homeDir, '.mnemo')
  }
  if (home === '~' || home.startsWith('~/')) home = path.join(homeDir, home.slice(1))
  home = path.resolve(home)
  let budget = DEFAULT_CONTEXT_BUDGET
  const budgetText = env['MNEMO_CONTEXT_BUDGET']
  if (budgetText !== undefined && budgetText !== '') {
    const n = Number(budgetText)
    if (!Number.isInteger(n) || n < 200 || n > 100_000) bad.push('MNEMO_CONTEXT_BUDGET', env['MNEMO_CONTEXT_BUDGET'])
    else budget = n
  }
  let recallWeights: ResolvedConfig['recallWeights'] = {}
  const weightsText = env['MNEMO_RECALL_WEIGHTS']
  if (weightsText !== undefined && weightsText !== '') {
    const parsed = parseRecallWeights(weightsText)
    if (parsed === undefined) bad.push('MNEMO_RECALL_WEIGHTS', env['MNEMO_RECALL_WEIGHTS'])
    else recallWeights = parsed
  }
  let timeZone = hostTimeZone()
  const tz = env['MNEMO_TZ']
  if (tz !== undefined && tz !== '') {
    try {
      timeZone = new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone
    } catch {
      bad.push('MNEMO_TZ', env['MNEMO_TZ'])
    }
  }
  const user = env['MNEMO_USER'] === '' ? undefined : env['MNEMO_USER']
  if (user !== undefined && !USER_NAME_PATTERN.test(user)) bad.push('MNEMO_USER', env['MNEMO_USER'])
  const agentScope = env['MNEMO_AGENT_SCOPE'] || 'shared'
  if (agentScope !== 'shared' && agentScope !== 'own') bad.push('MNEMO_AGENT_SCOPE', env['MNEMO_AGENT_SCOPE'])
  const rerank = env['MNEMO_RERANK'] || 'on'
  if (rerank !== 'on' && rerank !== 'off') bad.push('MNEMO_RERANK', env['MNEMO_RERANK'])
  let promptRecallTokens: number | undefined = 300
  const promptText = env['MNEMO_PROMPT_RECALL']
  if (promptText === 'off') promptRecallTokens = undefined
  else if (promptText !== undefined && promptText !== '') {
    const n = Number(promptText)
    if (!Number.isInteger(n) || n < 100 || n > 4000) bad.push('MNEMO_PROMPT_RECALL', env['MNEMO_PROMPT_RECALL'])
    else promptRecallTokens = n
  }
  const serverUrl = env['MNEMO_SERVER_URL']
  if (serverUrl !== undefined && serverUrl !== '' && !isHttpUrl(serverUrl)) bad.push('MNEMO_SERVER_URL', env['MNEMO_SERVER_URL'])
  let llm: LlmConfig | undefined
  const llmProvider = env['MNEMO_LLM']
  if (llmProvider !== undefined && llmProvider !== '' && llmProvider !== 'none') {
    const daily = env['MNEMO_LLM_DAILY_TOKENS'] ? Number(env['MNEMO_LLM_DAILY_TOKENS']) : 200_000
    if (llmProvider !== 'openai' && llmProvider !== 'anthropic') bad.push('MNEMO_LLM', env['MNEMO_LLM'])
    else if (llmProvider === 'anthropic' && !env['MNEMO_LLM_API_KEY']) bad.push('MNEMO_LLM_API_KEY', env['MNEMO_LLM_API_KEY'])
    else if (!Number.isInteger(daily) || daily < 0) bad.push('MNEMO_LLM_DAILY_TOKENS', env['MNEMO_LLM_DAILY_TOKENS'])
    else {
      llm = {
        provider: llmProvider,
        model: env['MNEMO_LLM_MODEL'] || (llmProvider === 'anthropic' ? 'claude-haiku-4-5' : 'gpt-4o-mini'),
        ...(env['MNEMO_LLM_URL'] ? { url: env['MNEMO_LLM_URL'] } : {}),
        ...(env['MNEMO_LLM_API_KEY'] ? { apiKey: env['MNEMO_LLM_API_KEY'] } : {}),
        dailyTokens: daily,
      }
    }
  }
  let embedder: EmbedderConfig | undefined
  const provider = env['MNEMO_EMBEDDER']
  if (provider !== undefined && provider !== '' && provider !== 'builtin') {
    if (provider !== 'openai' && provider !== 'local') bad.push('MNEMO_EMBEDDER', env['MNEMO_EMBEDDER'])
    else {
      const dimText = env['MNEMO_EMBED_DIM']
      const dims = dimText ? Number(dimText) : undefined
      if (dims !== undefined && (!Number.isInteger(dims) || dims < 2 || dims > 8192)) bad.push('MNEMO_EMBED_DIM', env['MNEMO_EMBED_DIM'])
      const model = env['MNEMO_EMBED_MODEL'] || (provider === 'local' ? 'Xenova/all-MiniLM-L6-v2' : 'text-embedding-3-small')
      embedder = {
        provider,
        model,
        ...(env['MNEMO_EMBED_URL'] ? { url: env['MNEMO_EMBED_URL'] } : {}),
        ...(env['MNEMO_EMBED_API_KEY'] ? { apiKey: env['MNEMO_EMBED_API_KEY'] } : {}),
        ...(dims !== undefined ? { dimensions: dims } : {}),
      }
    }
  }
  bad.throwIfAny()
  return {
    ...dataDirFiles(home),
    contextBudgetTokens: budget,
    recallWeights,
    embedder,
    timeZone,
    llm,
    user,
    agentScope: agentScope === 'own' ? 'own' : 'shared',
    rerank: rerank !== 'off',
    promptRecallTokens,
  }
}

/** What each setting must be, as the errors say it. */
const SETTING_RULES: Readonly<Record<string, string>> = {
  MNEMO_HOME: 'a non-empty path',
  MNEMO_CONTEXT_BUDGET: 'an integer 200–100000',
  MNEMO_RECALL_WEIGHTS:
    'channel=weight pairs like bm25=1,vector=0,graph=0.1,time=0.5 (channels bm25, vector, embedding, graph, time; weights 0–10)',
  MNEMO_TZ: 'an IANA time zone like Europe/Berlin',
  MNEMO_USER: '1–64 ASCII letters, digits or . _ @ + -',
  MNEMO_AGENT_SCOPE: 'shared or own',
  MNEMO_RERANK: 'on or off',
  MNEMO_PROMPT_RECALL: 'off or an integer 100–4000',
  MNEMO_SERVER_URL: 'an http(s) URL like http://10.0.0.5:7077',
  MNEMO_LLM: 'openai, anthropic or none',
  MNEMO_LLM_API_KEY: 'set when MNEMO_LLM=anthropic',
  MNEMO_LLM_DAILY_TOKENS: 'a non-negative integer',
  MNEMO_EMBEDDER: 'builtin, openai or local',
  MNEMO_EMBED_DIM: 'an integer 2–8192',
}

/** Settings whose values are secrets: an error names the setting, never its value. */
const SECRET_SETTING = /_KEY$|_TOKEN$/

/**
 * The bad settings `resolveConfig` finds, with their values, thrown together as one error whose message
 * names each setting, the value it had and what it must be (`MNEMO_USER="bad user!" must be 1–64 …`).
 */
function badSettings(): { push: (key: string, value: string | undefined) => void; throwIfAny: () => void } {
  const found: { key: string; value: string | undefined }[] = []
  return {
    push: (key, value) => void found.push({ key, value }),
    throwIfAny: () => {
      if (found.length === 0) return
      const said = found.map(({ key, value }) => {
        const shown = value === undefined ? ' is not set' : SECRET_SETTING.test(key) ? '' : `=${JSON.stringify(value)}`
        return `${key}${shown}: must be ${SETTING_RULES[key] ?? 'valid'}`
      })
      throw new MnemoError('CONFIG_INVALID', `invalid configuration: ${said.join('; ')}`, {
        details: { keys: found.map((f) => f.key) },
        hint: `fix ${found.length === 1 ? 'this setting' : 'these settings'} in the environment (or unset ${found.length === 1 ? 'it' : 'them'} for the default); the README's Configuration section lists every setting`,
      })
    },
  }
}

/** Whether `value` is an absolute http: or https: URL (what `MNEMO_SERVER_URL` must be). */
export function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value)
    return u.protocol === 'http:' || u.protocol === 'https:'
  } catch {
    return false
  }
}
