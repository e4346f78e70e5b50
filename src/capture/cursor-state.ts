import { fileURLToPath } from 'node:url'
import { fnv1a64, stableStringify } from '../core/hash.js'
import { capText } from '../core/text.js'
import type { DerivedObservation, EventInput, ProjectRef } from '../core/types.js'
import type { CaptureDerivation, Deriver, ParseResult } from './derivation.js'
import { namedProject, resolveProjectRoot } from './project.js'
import { sanitizePayload } from './sanitize.js'
import {
  describeToolResult,
  filesOfToolInput,
  isOwnTool,
  OBSERVATION_CHARS,
  oneLine,
  SESSION_TITLE_CHARS,
  toolObservationText,
} from './tool-text.js'
import { asRecord, str, timeline, timestampOf, type JsonRecord, type TranscriptParseOptions } from './transcript-format.js'

/**
 * Cursor's chats, as its SQLite `state.vscdb` files keep them (global:
 * `~/.config/Cursor/User/globalStorage/state.vscdb` on Linux, `~/Library/Application
 * Support/Cursor/User/globalStorage/state.vscdb` on macOS; per workspace:
 * `workspaceStorage/<hash>/state.vscdb` beside a `workspace.json` naming the folder). Two
 * key/value tables, `ItemTable` and `cursorDiskKV` (`key TEXT`, `value` JSON text or blob):
 *
 * - `cursorDiskKV` `composerData:<composerId>`: a Composer conversation `{composerId, name?,
 *   createdAt, lastUpdatedAt?, status, …}` whose messages ("bubbles") are inline in
 *   `conversation: [bubble]` (older versions) or listed in `fullConversationHeadersOnly:
 *   [{bubbleId, type}]` and stored as `bubbleId:<composerId>:<bubbleId>`;
 * - a bubble: `{bubbleId, type: 1 (user) | 2 (assistant), text, richText?, createdAt (ISO),
 *   thinking?: {text}, toolFormerData?: {name, toolCallId, status: loading|completed|cancelled|error,
 *   rawArgs, params, result (JSON strings), additionalData, userDecision?}, codeBlocks?,
 *   workspaceProjectDir?, workspaceUris?, …}`;
 * - `ItemTable` `workbench.panel.aichat.view.aichat.chatdata` (the older chat panel, in
 *   workspace databases): `{tabs: [{tabId, chatTitle, lastSendTime, bubbles: [{id, type:
 *   user|ai, text}]}]}`; `composer.composerData` lists a workspace's composers (`allComposers:
 *   [{composerId}]`), whose content is in the global database.
 *
 * The shapes are not documented by Cursor; these come from public tools that read them
 * (cursor-chat-browser, and the reverse-engineered references of chatrxiv and others).
 */

/** One key/value row of a Cursor table (the value as text). */
export interface CursorRow {
  key: string
  value: string
}

/** What {@link parseCursorState} reads from one state.vscdb: lazy, so a large global database is never loaded whole. */
export interface CursorStateSource {
  /** The `composerData:<id>` rows of `cursorDiskKV`. */
  composers(): Iterable<CursorRow>
  /** The stored bubbles of one composer, by bubble id (rows `bubbleId:<composerId>:<bubbleId>`). */
  bubbles(composerId: string): Map<string, string>
  /** One value of `ItemTable`, or undefined. */
  item(key: string): string | undefined
}

/** Options of {@link parseCursorState}: `file` is the state.vscdb path. */
export interface CursorParseOptions extends TranscriptParseOptions {
  /** The folder of the workspace a workspace database belongs to (from its `workspace.json`). */
  workspaceFolder?: string
  /** Workspace folders of composers, by composer id (from the workspace databases beside a global one). */
  composerFolders?: ReadonlyMap<string, string>
  /** Time of events that have none at all (epoch ms; the database file's modification time). */
  fallbackTime?: number
}

/** ItemTable key of the older chat panel's tabs. */
export const CURSOR_CHAT_KEY = 'workbench.panel.aichat.view.aichat.chatdata'
/** ItemTable key of a workspace's composer list. */
export const CURSOR_COMPOSER_LIST_KEY = 'composer.composerData'

const COMPOSER_FIELDS = [
  '_v',
  'composerId',
  'name',
  'subtitle',
  'createdAt',
  'lastUpdatedAt',
  'status',
  'unifiedMode',
  'forceMode',
  'isAgentic',
  'modelConfig',
]
const BUBBLE_FIELDS = [
  '_v',
  'bubbleId',
  'id',
  'type',
  'text',
  'createdAt',
  'timestamp',
  'requestId',
  'serverBubbleId',
  'isAgentic',
  'unifiedMode',
  'capabilityType',
  'modelInfo',
  'modelType',
  'thinking',
  'toolFormerData',
  'codeBlocks',
  'workspaceProjectDir',
  'workspaceUris',
  'timingInfo',
]
const TAB_FIELDS = ['tabId', 'chatTitle', 'lastSendTime', 'createdAt']

const pick = (r: JsonRecord, fields: readonly string[]): JsonRecord => {
  const out: JsonRecord = {}
  for (const f of fields) if (r[f] !== undefined && r[f] !== null) out[f] = r[f]
  return out
}

function parseJson(text: string): { record: JsonRecord } | { error: string } {
  try {
    const record = asRecord(JSON.parse(text))
    return record ? { record } : { error: 'not a JSON object' }
  } catch (cause) {
    return { error: `invalid JSON: ${(cause as Error).message}` }
  }
}

/** mnemo's own MCP tools as Cursor names them. */
function isOwnCursorTool(name: string): boolean {
  return isOwnTool(name) || /^mcp_mnemo_/i.test(name) || /^mnemo[._-]/i.test(name)
}

/** The plain text of Cursor's Lexical rich text (`{root: {children: [...]}}` as JSON). */
function lexicalText(richText: unknown): string {
  if (typeof richText !== 'string' || !richText.trim().startsWith('{')) return ''
  let root: unknown
  try {
    root = asRecord(JSON.parse(richText))?.['root']
  } catch {
    return ''
  }
  const out: string[] = []
  const walk = (node: unknown, depth: number): void => {
    const n = asRecord(node)
    if (!n || depth > 50) return
    if (typeof n['text'] === 'string') out.push(n['text'])
    if (Array.isArray(n['children'])) {
      for (const c of n['children']) walk(c, depth + 1)
      if (n['type'] === 'paragraph') out.push('\n')
    }
  }
  walk(root, 0)
  return out.join('').trim()
}

/** A bubble's text: `text`, else its rich text, else the older panel's `rawText`. */
function bubbleText(b: JsonRecord): string {
  return str(b['text'])?.trim() || lexicalText(b['richText']) || str(b['rawText'])?.trim() || ''
}

/** A folder path from a workspace URI (`file:///home/u/app`, `vscode-remote://ssh-remote+h/home/u/app`) or a plain path. */
export function folderOfUri(uri: string): string | undefined {
  if (uri.startsWith('/')) return uri
  try {
    const url = new URL(uri)
    const p = url.protocol === 'file:' ? fileURLToPath(url) : decodeURIComponent(url.pathname)
    return p.length > 0 ? p : undefined
  } catch {
    return undefined
  }
}

/** A composer's folder from its bubbles: `workspaceProjectDir`, else the first `workspaceUris` entry. */
function folderOfBubbles(bubbles: readonly JsonRecord[]): string | undefined {
  for (const b of bubbles) {
    const dir = str(b['workspaceProjectDir'])
    if (dir) return folderOfUri(dir)
  }
  for (const b of bubbles) {
    const uris = Array.isArray(b['workspaceUris']) ? b['workspaceUris'] : []
    for (const u of uris) {
      const uri = typeof u === 'string' ? u : (str(asRecord(u)?.['external']) ?? str(asRecord(u)?.['fsPath']))
      const folder = uri ? folderOfUri(uri) : undefined
      if (folder) return folder
    }
  }
  return undefined
}

const tsOf = (b: JsonRecord): number | undefined =>
  timestampOf(b['createdAt']) ?? timestampOf(b['timestamp']) ?? timestampOf(asRecord(b['timingInfo'])?.['clientRpcSendTime'])

/**
 * Parses the chats of one Cursor state.vscdb into events: one per Composer conversation
 * (its title and times), one per bubble, and for the older chat panel one per tab and one
 * per bubble.
 *
 * - `sessionKey`: the `composerId` (the older panel: its `tabId`).
 * - `project`: `options.project`; else the workspace folder of a workspace database; else the
 *   composer's workspace from `options.composerFolders`; else a bubble's `workspaceProjectDir` or
 *   first `workspaceUris` folder; else the corpus `cursor:<first 8 characters of the id>`.
 * - Bubbles in conversation order (`fullConversationHeadersOnly`, else `conversation`); `ts`: the
 *   bubble's `createdAt` (or `timingInfo.clientRpcSendTime`), else the previous bubble's, else the
 *   conversation's `createdAt`, else `options.fallbackTime`.
 * - `idemKey`: `cursor:<composerId>:composer`, `cursor:<composerId>:<bubbleId>` (a bubble without
 *   an id: `i<index>:<fnv1a64 of it>`); the older panel `cursor:<tabId>:tab` and
 *   `cursor:<tabId>:<bubble id>`.
 * - Stored payloads keep the fields that say what happened (text, thinking, tool call, code
 *   blocks, model, times, workspace); the rest of Cursor's per-bubble context (attached files,
 *   lints, diffs) is not stored. A tool call's `rawArgs`, `params` and `result` (JSON text in
 *   Cursor) are stored parsed.
 *
 * Conversations without a stored message add nothing. Skipped, with the key as locator: rows
 * that are not JSON objects, listed bubbles that are not stored, bubbles still being generated
 * (in `generatingBubbleIds`) and tool calls still `loading` (a later import adds them).
 * Bubbles of another `type` than user/assistant are counted in `unknownTypes` (`bubble type
 * <t>`). mnemo's own tool calls are dropped. `read` counts conversations, tabs and bubbles.
 *
 * @throws whatever `source` throws (a database error); odd shapes are skipped, never thrown.
 */
export function parseCursorState(source: CursorStateSource, options: CursorParseOptions): ParseResult {
  const result: ParseResult = { events: [], read: 0, skipped: [], unknownTypes: {} }
  const composers: { id: string; record: JsonRecord }[] = []
  for (const row of source.composers()) {
    result.read++
    const parsed = parseJson(row.value)
    if ('error' in parsed) {
      result.skipped.push({ line: row.key, reason: parsed.error })
      continue
    }
    composers.push({ id: str(parsed.record['composerId']) ?? row.key.slice('composerData:'.length), record: parsed.record })
  }
  composers.sort(
    (a, b) =>
      (timestampOf(a.record['createdAt']) ?? Number.MAX_SAFE_INTEGER) - (timestampOf(b.record['createdAt']) ?? Number.MAX_SAFE_INTEGER) ||
      (a.id < b.id ? -1 : 1),
  )
  for (const composer of composers) parseComposer(source, composer.id, composer.record, options, result)
  parseChatTabs(source, options, result)
  return result
}

/** Bubble ids should be unique in a conversation; a repeated one gets `#2`, `#3` … so neither copy is lost. */
function uniqueKeys(): { next: (key: string) => string } {
  const seen = new Map<string, number>()
  return {
    next(key) {
      const n = (seen.get(key) ?? 0) + 1
      seen.set(key, n)
      return n > 1 ? `${key}#${n}` : key
    },
  }
}

function bubbleType(b: JsonRecord): 'user' | 'assistant' | undefined {
  const t = b['type']
  return t === 1 || t === 'user' ? 'user' : t === 2 || t === 'ai' || t === 'assistant' ? 'assistant' : undefined
}

function parseComposer(
  source: CursorStateSource,
  cid: string,
  composer: JsonRecord,
  options: CursorParseOptions,
  result: ParseResult,
): void {
  const headers = Array.isArray(composer['fullConversationHeadersOnly']) ? composer['fullConversationHeadersOnly'] : undefined
  const inline = Array.isArray(composer['conversation']) ? composer['conversation'] : []
  const generating = new Set(
    (Array.isArray(composer['generatingBubbleIds']) ? composer['generatingBubbleIds'] : []).filter(
      (x): x is string => typeof x === 'string',
    ),
  )
  const stored = headers ? source.bubbles(cid) : new Map<string, string>()
  const bubbles: { key: string; locator: string; bubble: JsonRecord }[] = []
  const keys = uniqueKeys()
  const entries = headers ?? inline
  entries.forEach((entry, index) => {
    result.read++
    const header = asRecord(entry)
    const bubbleId = str(header?.['bubbleId'])
    const locator = headers ? `bubbleId:${cid}:${bubbleId ?? `#${index}`}` : `composerData:${cid} conversation[${index}]`
    let bubble: JsonRecord | undefined
    if (!header) {
      result.skipped.push({ line: locator, reason: 'bubble is not an object' })
      return
    }
    if (headers) {
      const text = bubbleId ? stored.get(bubbleId) : undefined
      if (text === undefined) {
        result.skipped.push({ line: locator, reason: 'listed in the conversation but not stored' })
        return
      }
      const parsed = parseJson(text)
      if ('error' in parsed) {
        result.skipped.push({ line: locator, reason: parsed.error })
        return
      }
      bubble = { type: header['type'], ...parsed.record }
    } else bubble = header
    const type = bubbleType(bubble)
    if (!type) {
      const t = `bubble type ${String(bubble['type'] ?? '(none)')}`
      result.unknownTypes[t] = (result.unknownTypes[t] ?? 0) + 1
      return
    }
    const id = bubbleId ?? str(bubble['bubbleId'])
    if (id && generating.has(id)) {
      result.skipped.push({ line: locator, reason: 'still being generated: import again once Cursor has finished it' })
      return
    }
    const tool = asRecord(bubble['toolFormerData'])
    const toolName = str(tool?.['name'])
    if (tool && toolName && isOwnCursorTool(toolName)) return
    if (tool && str(tool['status']) === 'loading') {
      result.skipped.push({ line: locator, reason: 'tool call still loading: import again once it has finished' })
      return
    }
    bubbles.push({ key: keys.next(id ?? `i${index}:${fnv1a64(stableStringify(bubble))}`), locator, bubble })
  })
  // A conversation opened and closed without a message: nothing happened in it.
  if (bubbles.length === 0) return
  const project =
    options.project ??
    folderProject(options.workspaceFolder) ??
    folderProject(options.composerFolders?.get(cid)) ??
    folderProject(folderOfBubbles(bubbles.map((b) => b.bubble))) ??
    namedProject('cursor', cid.slice(0, 8))
  const startedAt =
    timestampOf(composer['createdAt']) ?? bubbles.map((b) => tsOf(b.bubble)).find((t) => t !== undefined) ?? options.fallbackTime ?? 0
  const times = timeline([startedAt, ...bubbles.map((b) => tsOf(b.bubble))]).slice(1)
  const push = (type: string, key: string, ts: number, payload: unknown): void => {
    const event: EventInput = {
      agent: 'cursor',
      format: 'cursor-state',
      type,
      sessionKey: cid,
      project,
      ts,
      idemKey: `cursor:${cid}:${key}`,
      payload: sanitizePayload(payload, options.redact),
      sessionStartedAt: startedAt,
    }
    result.events.push(event)
  }
  push('composer', 'composer', startedAt, pick(composer, COMPOSER_FIELDS))
  for (const [i, b] of bubbles.entries()) push('bubble', b.key, times[i] ?? startedAt, bubblePayload(b.bubble))
}

function bubblePayload(b: JsonRecord): JsonRecord {
  const out = pick(b, BUBBLE_FIELDS)
  // Cursor keeps a tool call's arguments and result as JSON text: stored parsed, so the size caps cut
  // inside a long output instead of breaking the JSON around it.
  const tool = asRecord(b['toolFormerData'])
  if (tool) {
    const parsed: JsonRecord = { ...tool }
    for (const f of ['rawArgs', 'params', 'result']) if (typeof tool[f] === 'string') parsed[f] = parseMaybe(tool[f])
    out['toolFormerData'] = parsed
  }
  // Some user bubbles keep their words only in the rich text.
  if (!str(b['text'])?.trim()) {
    const rich = lexicalText(b['richText']) || str(b['rawText'])?.trim()
    if (rich) out['text'] = rich
  }
  return out
}

function folderProject(folder: string | undefined): ProjectRef | undefined {
  return folder ? resolveProjectRoot(folder) : undefined
}

/** The older chat panel (`workbench.panel.aichat.view.aichat.chatdata`): one session per tab. */
function parseChatTabs(source: CursorStateSource, options: CursorParseOptions, result: ParseResult): void {
  const raw = source.item(CURSOR_CHAT_KEY)
  if (raw === undefined) return
  const parsed = parseJson(raw)
  if ('error' in parsed) {
    result.read++
    result.skipped.push({ line: CURSOR_CHAT_KEY, reason: parsed.error })
    return
  }
  const tabs = Array.isArray(parsed.record['tabs']) ? parsed.record['tabs'] : []
  tabs.forEach((t, tabIndex) => {
    result.read++
    const tab = asRecord(t)
    const tabId = str(tab?.['tabId'])
    if (!tab || !tabId) {
      result.skipped.push({ line: `${CURSOR_CHAT_KEY} tabs[${tabIndex}]`, reason: tab ? 'tab without tabId' : 'tab is not an object' })
      return
    }
    const bubbles: { key: string; bubble: JsonRecord }[] = []
    const keys = uniqueKeys()
    const list = Array.isArray(tab['bubbles']) ? tab['bubbles'] : []
    list.forEach((x, index) => {
      result.read++
      const bubble = asRecord(x)
      if (!bubble) {
        result.skipped.push({ line: `${CURSOR_CHAT_KEY} tab ${tabId} bubbles[${index}]`, reason: 'bubble is not an object' })
        return
      }
      if (!bubbleType(bubble)) {
        const ty = `bubble type ${String(bubble['type'] ?? '(none)')}`
        result.unknownTypes[ty] = (result.unknownTypes[ty] ?? 0) + 1
        return
      }
      bubbles.push({ key: keys.next(str(bubble['id']) ?? `i${index}:${fnv1a64(stableStringify(bubble))}`), bubble })
    })
    const project = options.project ?? folderProject(options.workspaceFolder) ?? namedProject('cursor', tabId.slice(0, 8))
    const startedAt =
      timestampOf(tab['createdAt']) ??
      bubbles.map((b) => tsOf(b.bubble)).find((x) => x !== undefined) ??
      timestampOf(tab['lastSendTime']) ??
      options.fallbackTime ??
      0
    const times = timeline([startedAt, ...bubbles.map((b) => tsOf(b.bubble))]).slice(1)
    const push = (type: string, key: string, ts: number, payload: unknown): void => {
      result.events.push({
        agent: 'cursor',
        format: 'cursor-state',
        type,
        sessionKey: tabId,
        project,
        ts,
        idemKey: `cursor:${tabId}:${key}`,
        payload: sanitizePayload(payload, options.redact),
        sessionStartedAt: startedAt,
      })
    }
    push('tab', 'tab', startedAt, pick(tab, TAB_FIELDS))
    for (const [i, b] of bubbles.entries()) push('bubble', b.key, times[i] ?? startedAt, bubblePayload(b.bubble))
  })
}

const capped = (text: string): string => capText(text, OBSERVATION_CHARS)

function parseMaybe(value: unknown): unknown {
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value) as unknown
  } catch {
    return value
  }
}

/** Cursor's tools name their paths `target_file`, `target_directory`; edits `code_edit`. */
function toolInput(tool: JsonRecord): unknown {
  const raw = parseMaybe(tool['rawArgs'])
  const args = asRecord(raw) ?? asRecord(parseMaybe(tool['params'])) ?? raw
  const r = asRecord(args)
  if (!r) return args ?? {}
  const out: JsonRecord = { ...r }
  for (const [from, to] of [
    ['target_file', 'file_path'],
    ['targetFile', 'file_path'],
    ['relativeWorkspacePath', 'file_path'],
    ['target_directory', 'path'],
    ['code_edit', 'content'],
  ] as const) {
    if (typeof r[from] === 'string' && out[to] === undefined) out[to] = r[from]
  }
  return out
}

function toolObservations(tool: JsonRecord): DerivedObservation[] {
  const name = str(tool['name']) ?? (tool['tool'] !== undefined ? `tool ${String(tool['tool'])}` : undefined)
  if (!name || isOwnCursorTool(name)) return []
  const ref = str(tool['toolCallId'])
  const input = toolInput(tool)
  const out: DerivedObservation[] = [
    {
      kind: 'tool',
      role: 'assistant',
      tool: name,
      text: toolObservationText(name, input),
      files: filesOfToolInput(input),
      ...(ref ? { sourceRef: ref } : {}),
    },
  ]
  const status = str(tool['status'])
  const rejected = tool['userDecision'] === 'rejected'
  const failed = status === 'error' || status === 'cancelled' || rejected || str(asRecord(tool['additionalData'])?.['status']) === 'error'
  const result = describeToolResult(parseMaybe(tool['result']))
  if (failed)
    out.push({
      kind: 'error',
      role: 'tool',
      tool: name,
      text: capped(result || (rejected ? '(rejected by the user)' : `(${status ?? 'error'})`)),
      ...(ref ? { sourceRef: ref } : {}),
    })
  else if (result) out.push({ kind: 'tool_result', role: 'tool', tool: name, text: capped(result), ...(ref ? { sourceRef: ref } : {}) })
  return out
}

/**
 * Derives observations from one stored Cursor record:
 * - `composer` / `tab` → no observation; its `name` / `chatTitle` names the session;
 * - a user bubble (`type` 1, or `user`) → `prompt`/`user` from its text;
 * - an assistant bubble (`type` 2, or `ai`) → `reasoning`/`assistant` from `thinking.text`,
 *   then for a `toolFormerData` a `tool` observation (name, arguments from `rawArgs` or
 *   `params`, files; `sourceRef` = `toolCallId`) and its result (`tool_result`, or `error` when
 *   the status is `error`/`cancelled`, the user rejected it, or `additionalData.status` is
 *   `error`; role `tool`), then `message`/`assistant` from its text.
 * A bubble with no text, thinking or tool call derives nothing. Texts are capped at
 * `OBSERVATION_CHARS`. Never throws on odd shapes.
 */
export const deriveCursorState: Deriver = (event) => {
  const out: CaptureDerivation = { observations: [] }
  const r = asRecord(event.payload)
  if (!r) return out
  if (event.type === 'composer' || event.type === 'tab') {
    const title = (str(r['name']) ?? str(r['chatTitle']))?.trim()
    if (title) out.session = { title: oneLine(title, SESSION_TITLE_CHARS) }
    return out
  }
  if (event.type !== 'bubble') return out
  const type = bubbleType(r)
  const text = bubbleText(r)
  if (type === 'user') {
    if (text) out.observations.push({ kind: 'prompt', role: 'user', text: capped(text) })
  } else if (type === 'assistant') {
    const thinking = str(asRecord(r['thinking'])?.['text'])?.trim()
    if (thinking) out.observations.push({ kind: 'reasoning', role: 'assistant', text: capped(thinking) })
    const tool = asRecord(r['toolFormerData'])
    if (tool) out.observations.push(...toolObservations(tool))
    if (text) out.observations.push({ kind: 'message', role: 'assistant', text: capped(text) })
  }
  return out
}
