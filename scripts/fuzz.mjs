#!/usr/bin/env node
// Fuzzing of mnemo's parsers (a fuzzing script, not a test: it prints what it found).
//
//   node scripts/fuzz.mjs [--seconds 60] [--seed N] [--only target[,target…]]
//   node scripts/fuzz.mjs --only <target> --seed <S> --path <P>     # replay one counterexample
//
// Runs fast-check properties against the BUILT code in dist/ (`npm run build` first),
// one target per parser, the time budget split between them by weight. For each target
// it prints runs, failures and, for a failure, the shrunk counterexample with the
// command that replays it. Exits 1 when any property failed, 2 on a usage error.
//
// Exploration runs with `endOnFailure` (no shrinking inside the time budget); a failing
// run is then replayed by seed and path and shrunk for up to SHRINK_MS of its own, so
// the total can overrun the budget by that much per failure.
import { existsSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const DIST = path.join(ROOT, 'dist')
if (!existsSync(path.join(DIST, 'index.js'))) {
  console.error('dist/ is missing: run `npm run build` first (the fuzzer tests the built code)')
  process.exit(2)
}
let fc
try {
  fc = (await import('fast-check')).default
} catch {
  console.error('fast-check is not installed: run `npm ci` (it is a devDependency)')
  process.exit(2)
}

// ---------------------------------------------------------------------------
// Arguments

const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  if (i < 0) return fallback
  const v = args[i + 1]
  if (v === undefined || v.startsWith('--')) usage(`--${name} needs a value`)
  return v
}
function usage(message) {
  console.error(`fuzz: ${message}\nusage: node scripts/fuzz.mjs [--seconds 60] [--seed N] [--only target,…] [--path P]`)
  process.exit(2)
}
for (const a of args) if (a.startsWith('--') && !['--seconds', '--seed', '--only', '--path'].includes(a)) usage(`unknown option ${a}`)
const SECONDS = Number(opt('seconds', '60'))
if (!Number.isFinite(SECONDS) || SECONDS <= 0) usage(`--seconds must be a positive number (got ${opt('seconds')})`)
const SEED = Number(opt('seed', String(Date.now() % 2 ** 31)))
if (!Number.isInteger(SEED)) usage(`--seed must be an integer (got ${opt('seed')})`)
const ONLY = opt('only', undefined)?.split(',').filter(Boolean)
const REPLAY_PATH = opt('path', undefined)
const SHRINK_MS = 8_000
const MAX_FAILURES_PER_TARGET = 3

// ---------------------------------------------------------------------------
// The built code

const dist = (p) => import(pathToFileURL(path.join(DIST, p)).href)
const { MnemoError } = await dist('core/errors.js')
const { DEFAULT_CAPS } = await dist('core/text.js')
const { createManualClock } = await dist('core/clock.js')
const { captureClaudeHook, deriveClaudeHook } = await dist('capture/claude-hook.js')
const { isOwnTool } = await dist('capture/tool-text.js')
const { parseClaudeTranscript, deriveClaudeTranscript } = await dist('capture/claude-transcript.js')
const { parseCodexRollout, deriveCodexRollout } = await dist('capture/codex-rollout.js')
const { detectTranscriptFormat } = await dist('capture/transcript-format.js')
const { parseLocomo } = await dist('capture/locomo.js')
const { deriveLocomoTurn } = await dist('capture/locomo-turn.js')
const { validateLongMemEval, longMemEvalEvents } = await dist('bench/longmemeval.js')
const { redactSecrets, redactValue } = await dist('capture/redact.js')
const { detectInjection, INJECTION_REASONS } = await dist('capture/injection.js')
const { toMatchExpression } = await dist('retrieval/fts-query.js')
const { resolveRelativeTimes } = await dist('retrieval/time-expressions.js')
const { resolveConfig } = await dist('config/config.js')
const { MnemoEngine } = await dist('engine/mnemo.js')
const { DEFAULT_RECALL_CONFIG } = await dist('engine/recall-pipeline.js')
const { openSqliteStore } = await dist('storage/sqlite/sqlite-store.js')
const Database = (await import('better-sqlite3')).default

const NOW = Date.parse('2025-06-14T10:00:00Z')
/** A stored string may be the cap plus capText's `…[mnemo: N chars cut, M total]…` marker. */
const FIELD_LIMIT = DEFAULT_CAPS.fieldChars + 64

/** A fresh engine on an in-memory store; recreated now and then so memory stays flat. */
function engineFactory() {
  let engine
  let uses = 0
  return () => {
    if (!engine || uses++ > 150) {
      void engine?.close()
      const clock = createManualClock(NOW)
      const store = openSqliteStore({ path: ':memory:' }, () => clock.now())
      engine = new MnemoEngine({ store, clock, cwd: '/fuzz/project', contextBudgetTokens: 2000, timeZone: 'UTC' })
      uses = 0
    }
    return engine
  }
}

// ---------------------------------------------------------------------------
// Invariant helpers: each throws an Error naming the invariant that broke.

class Violation extends Error {}
function check(ok, invariant, detail) {
  if (!ok) throw new Violation(detail === undefined ? invariant : `${invariant} (${detail})`)
}
/** Runs `fn`; an exception becomes a violation of `invariant` naming the error. */
function noThrow(invariant, fn) {
  try {
    return fn()
  } catch (error) {
    if (error instanceof Violation) throw error
    throw new Violation(`${invariant}: threw ${describeError(error)}`)
  }
}
async function noThrowAsync(invariant, fn) {
  try {
    return await fn()
  } catch (error) {
    if (error instanceof Violation) throw error
    throw new Violation(`${invariant}: threw ${describeError(error)}`)
  }
}
function describeError(error) {
  if (MnemoError.is(error)) return `MnemoError ${error.code}: ${error.message}`
  if (error instanceof Error) return `${error.constructor?.name ?? 'Error'}: ${error.message}`
  return `non-error ${String(error)}`
}
function walk(value, visit, keyPath = '$') {
  if (typeof value === 'string') visit('string', value, keyPath)
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) walk(v, visit, `${keyPath}[${i}]`)
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      visit('key', k, keyPath)
      walk(v, visit, `${keyPath}.${k.length > 20 ? `${k.slice(0, 20)}…` : k}`)
    }
  }
}
function serialisable(value, invariant) {
  const text = noThrow(invariant, () => JSON.stringify(value))
  check(typeof text === 'string', invariant, 'JSON.stringify gave no text')
  return text
}
const hasLoneSurrogate = (s) => !s.isWellFormed()

// ---------------------------------------------------------------------------
// Arbitraries

/** Any UTF-16 code unit, lone surrogates and NUL included. */
const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c))
const oddBits = fc.constantFrom(
  '\u0000',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '\ud83d\ude00',
  '\ud83d',
  '\ufeff',
  '\u2028',
  '\u2029',
  '\u200b',
  '\u0301',
  '"',
  '\\',
  '\n',
  '\r\n',
  '\t',
  ' ',
  '{',
  '}',
  '[',
  ']',
  ':',
  ',',
  'e\u0301',
  '数据库',
  '한국어',
  '\u{1F468}\u200D\u{1F469}',
  'this year',
  'yesterday',
  'last May',
  '3 weeks ago',
)
const smallText = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 2, arbitrary: fc.string({ unit: anyUnit, maxLength: 20 }) },
  { weight: 2, arbitrary: fc.array(oddBits, { maxLength: 8 }).map((a) => a.join('')) },
  { weight: 1, arbitrary: fc.lorem({ maxCount: 8 }) },
)
/** Long strings: repeated chunks (fast to build), base64-like blobs, data URIs. */
const hugeText = fc.oneof(
  fc.tuple(fc.string({ unit: anyUnit, minLength: 1, maxLength: 6 }), fc.integer({ min: 2_000, max: 60_000 })).map(([s, n]) => s.repeat(n)),
  fc.tuple(fc.lorem({ maxCount: 5 }), fc.integer({ min: 500, max: 3_000 })).map(([s, n]) => `${s} `.repeat(n)),
  fc.integer({ min: 600, max: 40_000 }).map((n) => 'QUJDRGVmZ2hpams0NTY3'.repeat(Math.ceil(n / 20)).slice(0, n)),
  fc.integer({ min: 20, max: 5_000 }).map((n) => `data:image/png;base64,${'iVBORw0KGgoAAAANSUhEUg'.repeat(n)}`),
  // Secret-dense text (an env dump, a log of tokens): redaction rewrites it after the cap.
  fc
    .tuple(
      fc.constantFrom('password=abc123def\n', 'x=1 token=t0k3n99 ', 'AKIAIOSFODNN7EXAMPLE ', 'api_key: "k1" ', 'pwd=a '),
      fc.integer({ min: 200, max: 5_000 }),
    )
    .map(([s, n]) => s.repeat(n)),
)
const nastyText = fc.oneof({ weight: 8, arbitrary: smallText }, { weight: 1, arbitrary: hugeText })

/** Builds a JSON-like value with nasty strings and keys, sometimes nested very deep. */
const nastyKey = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'a',
      'type',
      'text',
      'content',
      'password',
      'api_key',
      'token',
      'stdout',
      'file_path',
      '__proto__',
      'constructor',
      '',
    ),
  },
  { weight: 1, arbitrary: smallText },
)
const { jsonish } = fc.letrec((tie) => ({
  jsonish: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    nastyText,
    fc.oneof(fc.integer(), fc.double({ noNaN: true }), fc.boolean(), fc.constant(null)),
    fc.array(tie('jsonish'), { maxLength: 5 }),
    fc.dictionary(nastyKey, tie('jsonish'), { maxKeys: 5 }),
  ),
}))
const deepValue = fc.tuple(fc.integer({ min: 15, max: 3_000 }), smallText, fc.boolean()).map(([depth, leaf, arrays]) => {
  let v = leaf
  for (let i = 0; i < depth; i++) v = arrays || i % 2 ? [v] : { k: v }
  return v
})
const payloadValue = fc.oneof(
  { weight: 6, arbitrary: jsonish },
  { weight: 1, arbitrary: deepValue },
  { weight: 1, arbitrary: fc.array(smallText, { minLength: 400, maxLength: 700 }) },
)

const bounded = (max) => nastyText.filter((s) => s.length <= max)
const optional = (arb) => fc.option(arb, { nil: undefined, freq: 3 })
const HOOK_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PreCompact',
  'SubagentStart',
  'SubagentStop',
  'Notification',
  'Stop',
  'SessionEnd',
]
// Event names: the known ones, other identifiers (kept: agents add events), and, for the raw target only, any text (refused).
const eventName = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/)
const hookEvent = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...HOOK_EVENTS) }, { weight: 1, arbitrary: eventName })
const anyEventName = fc.oneof({ weight: 3, arbitrary: hookEvent }, { weight: 1, arbitrary: smallText })

/** A payload of the shape Claude Code sends, every field filled with nasty text. */
const hookObject = fc
  .record(
    {
      session_id: bounded(512).filter((s) => s.length > 0),
      cwd: optional(fc.oneof(fc.constantFrom('/fuzz/a', '/fuzz/b/sub', '.', '', 'relative/dir'), bounded(4096))),
      hook_event_name: optional(bounded(64)),
      transcript_path: optional(bounded(4096)),
      tool_name: optional(
        fc.oneof(
          fc.constantFrom('Bash', 'Read', 'Edit', 'Write', 'WebFetch', 'mcp__mnemo__memory_recall', 'mnemo.memory_show'),
          bounded(512),
        ),
      ),
      tool_use_id: optional(bounded(512)),
      prompt: optional(nastyText),
      tool_input: optional(payloadValue),
      tool_response: optional(payloadValue),
      error: optional(payloadValue),
      last_assistant_message: optional(nastyText),
      agent_type: optional(smallText),
      extra: optional(fc.dictionary(nastyKey, payloadValue, { maxKeys: 3 })),
    },
    { requiredKeys: ['session_id'] },
  )
  .map((o) => {
    const { extra, ...rest } = o
    return { ...(extra ?? {}), ...rest }
  })

/** Lines of a JSONL file: valid records, garbage, truncated records, blanks; joined with LF or CRLF. */
function jsonlText(record) {
  const line = fc.oneof(
    { weight: 10, arbitrary: record.map((r) => JSON.stringify(r)) },
    {
      weight: 2,
      arbitrary: fc.tuple(record, fc.double({ min: 0, max: 1, noNaN: true })).map(([r, f]) => {
        const s = JSON.stringify(r)
        return s.slice(0, Math.floor(s.length * f))
      }),
    },
    { weight: 1, arbitrary: smallText },
    { weight: 1, arbitrary: fc.json() },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        ' ',
        '\t',
        '\r',
        '\ufeff',
        '{}',
        '[]',
        'null',
        '{"type":""}',
        '{"type":7}',
        '{"type":"user"}',
        '{"type":"response_item","payload":[]}',
      ),
    },
  )
  return fc
    .tuple(fc.array(line, { maxLength: 25 }), fc.constantFrom('\n', '\r\n'), fc.boolean(), fc.boolean())
    .map(([lines, eol, trailing, bom]) => `${bom ? '\ufeff' : ''}${lines.join(eol)}${trailing ? eol : ''}`)
}

const timestamp = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.date({ min: new Date('1990-01-01'), max: new Date('2040-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.integer(),
      fc.double({ noNaN: true }),
      fc.constantFrom(8.64e15, 8.64e15 + 1, -8.64e15 - 1, 1e300, -1e300, 0, -1),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(
      smallText,
      fc.constantFrom('2023-05-08', '+275760-09-13T00:00:00.000Z', '-271821-04-20T00:00:00Z', 'not a date', ''),
    ),
  },
)
const toolId = fc.constantFrom('t1', 't2', 't3', 'c1', 'c2')
const claudeBlock = fc.oneof(
  fc.record({ type: fc.constant('text'), text: nastyText }),
  fc.record({
    type: fc.constant('tool_use'),
    id: toolId,
    name: fc.oneof(fc.constantFrom('Bash', 'Read', 'Edit', 'mcp__mnemo__memory_recall'), smallText),
    input: payloadValue,
  }),
  fc.record(
    {
      type: fc.constant('tool_result'),
      tool_use_id: toolId,
      content: fc.oneof(nastyText, fc.array(fc.record({ type: fc.constant('text'), text: nastyText }), { maxLength: 3 }), jsonish),
      is_error: fc.boolean(),
    },
    { requiredKeys: ['type'] },
  ),
  fc.record({
    type: fc.constant('image'),
    source: fc.record({ type: fc.constant('base64'), media_type: fc.constant('image/png'), data: fc.base64String({ maxLength: 200 }) }),
  }),
  fc.record({ type: fc.constant('thinking'), thinking: nastyText }),
  nastyText,
  jsonish,
)
const claudeRecord = fc.record(
  {
    type: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom('user', 'assistant', 'summary') },
      { weight: 1, arbitrary: fc.constantFrom('system', 'file-history-snapshot', 'queue-operation') },
      { weight: 1, arbitrary: smallText },
    ),
    uuid: optional(fc.oneof(fc.uuid(), smallText)),
    sessionId: optional(fc.oneof(fc.constantFrom('s-1', 's-2'), smallText)),
    cwd: optional(fc.oneof(fc.constantFrom('/fuzz/a', '/fuzz/b/sub', '', '.'), smallText)),
    timestamp: optional(timestamp),
    isMeta: optional(fc.boolean()),
    message: optional(
      fc.oneof(
        {
          weight: 6,
          arbitrary: fc.record({
            role: fc.constantFrom('user', 'assistant'),
            content: fc.oneof(nastyText, fc.array(claudeBlock, { maxLength: 5 })),
          }),
        },
        { weight: 1, arbitrary: jsonish },
      ),
    ),
    summary: optional(fc.oneof(nastyText, jsonish)),
    toolUseResult: optional(jsonish),
  },
  { requiredKeys: ['type'] },
)

const codexPayload = (type) => {
  switch (type) {
    case 'session_meta':
      return fc.record({
        id: optional(fc.oneof(fc.uuid(), smallText)),
        timestamp: optional(timestamp),
        cwd: optional(fc.oneof(fc.constantFrom('/fuzz/a', '/fuzz/b'), smallText)),
      })
    case 'turn_context':
      return fc.record({ cwd: optional(fc.oneof(fc.constantFrom('/fuzz/a', '/fuzz/b'), smallText)), model: optional(smallText) })
    case 'event_msg':
      return fc.record(
        {
          type: fc.oneof(
            fc.constantFrom('user_message', 'agent_message', 'mcp_tool_call_begin', 'mcp_tool_call_end', 'token_count'),
            smallText,
          ),
          message: optional(fc.oneof(nastyText, jsonish)),
          images: optional(fc.oneof(fc.array(smallText, { maxLength: 2 }), jsonish)),
          call_id: optional(toolId),
          invocation: optional(fc.record({ server: fc.oneof(fc.constantFrom('mnemo', 'MNEMO', 'other'), jsonish) })),
        },
        { requiredKeys: [] },
      )
    case 'response_item':
      return fc.record(
        {
          type: fc.oneof(
            fc.constantFrom(
              'reasoning',
              'function_call',
              'custom_tool_call',
              'local_shell_call',
              'function_call_output',
              'custom_tool_call_output',
              'message',
            ),
            smallText,
          ),
          name: optional(fc.oneof(fc.constantFrom('shell', 'apply_patch', 'mcp__mnemo__memory_recall', 'mnemo__memory_recall'), smallText)),
          call_id: optional(toolId),
          arguments: optional(
            fc.oneof(
              nastyText,
              jsonish.map((v) => JSON.stringify(v)),
              jsonish,
            ),
          ),
          input: optional(
            fc.oneof(nastyText, fc.constant('*** Begin Patch\n*** Update File: src/a.ts\n@@\n-x\n+y\n*** End Patch'), jsonish),
          ),
          action: optional(jsonish),
          output: optional(
            fc.oneof(
              nastyText,
              fc.record({ content: jsonish, success: fc.boolean() }),
              fc.constantFrom('{"output":"x","metadata":{"exit_code":1}}', 'Exit code: 2\nboom', '{"metadata":'),
              jsonish,
            ),
          ),
          summary: optional(
            fc.oneof(
              fc.array(fc.record({ type: fc.constantFrom('summary_text', 'other'), text: fc.oneof(nastyText, jsonish) }), { maxLength: 3 }),
              jsonish,
            ),
          ),
        },
        { requiredKeys: [] },
      )
    case 'compacted':
      return fc.record({ message: optional(fc.oneof(nastyText, jsonish)) })
    default:
      return jsonish
  }
}
const codexRecord = fc
  .oneof(
    { weight: 9, arbitrary: fc.constantFrom('session_meta', 'turn_context', 'event_msg', 'response_item', 'compacted') },
    { weight: 1, arbitrary: smallText },
  )
  .chain((type) =>
    fc.record(
      {
        timestamp: optional(timestamp),
        type: fc.constant(type),
        payload: fc.oneof({ weight: 8, arbitrary: codexPayload(type) }, { weight: 1, arbitrary: jsonish }),
      },
      { requiredKeys: ['type'] },
    ),
  )

const locomoDate = fc.oneof(
  fc.constantFrom(
    '1:56 pm on 8 May, 2023',
    '10:37 am on 27 June, 2023',
    '8 May 2023',
    'May 8',
    'yesterday',
    'tomorrow at noon',
    '31 February, 2023',
    '1:56 pm on 8 May, 275760',
    '0:00 am on 1 January, 0001',
    '99999-01-01',
    '',
  ),
  smallText,
  jsonish,
)
const locomoTurn = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      {
        speaker: fc.oneof(fc.constantFrom('Ann', 'Ben'), smallText),
        dia_id: fc.oneof(fc.constantFrom('D1:1', 'D1:2', 'D2:1'), smallText),
        text: nastyText,
        blip_caption: optional(fc.oneof(smallText, jsonish)),
      },
      { requiredKeys: ['speaker', 'dia_id', 'text'] },
    ),
  },
  { weight: 1, arbitrary: jsonish },
)
const locomoSample = fc
  .tuple(
    fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.array(locomoTurn, { maxLength: 6 }), locomoDate, fc.boolean()), { maxLength: 4 }),
    optional(fc.oneof(fc.constantFrom('conv-1', 'conv-2'), smallText)),
    optional(jsonish),
  )
  .map(([sessions, sampleId, qa]) => {
    const conversation = {}
    for (const [n, turns, date, withDate] of sessions) {
      conversation[`session_${n}`] = turns
      if (withDate) conversation[`session_${n}_date_time`] = date
    }
    return { ...(sampleId !== undefined ? { sample_id: sampleId } : {}), conversation, ...(qa !== undefined ? { qa } : {}) }
  })
const locomoData = fc.oneof(
  { weight: 5, arbitrary: fc.array(fc.oneof({ weight: 6, arbitrary: locomoSample }, { weight: 1, arbitrary: jsonish }), { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.json().map((t) => JSON.parse(t)) },
  { weight: 1, arbitrary: jsonish },
)

const lmeDate = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .date({ min: new Date('2000-01-01'), max: new Date('2030-01-01'), noInvalidDate: true })
      .map(
        (d) =>
          `${d.getUTCFullYear()}/${String(d.getUTCMonth() + 1).padStart(2, '0')}/${String(d.getUTCDate()).padStart(2, '0')} (Mon) ${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`,
      ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '2023/02/30 (Thu) 10:00',
      '2023/05/20 (Sat) 24:00',
      '0000/01/01 (Sat) 00:00',
      '9999/12/31 (Fri) 23:59',
      ' 2023/05/20 (Sat) 02:21 ',
      '',
    ),
  },
  { weight: 1, arbitrary: jsonish },
)
const lmeTurn = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      {
        role: fc.oneof(fc.constantFrom('user', 'assistant'), jsonish),
        content: fc.oneof({ weight: 6, arbitrary: nastyText }, { weight: 1, arbitrary: jsonish }),
        has_answer: optional(fc.oneof(fc.boolean(), jsonish)),
      },
      { requiredKeys: ['role', 'content'] },
    ),
  },
  { weight: 1, arbitrary: jsonish },
)
const lmeInstance = fc
  .record({
    question_id: fc.oneof(fc.constantFrom('q1', 'q2_abs'), smallText, jsonish),
    question_type: fc.oneof(fc.constantFrom('single-session-user', 'temporal-reasoning'), jsonish),
    question: fc.oneof(nastyText, jsonish),
    question_date: lmeDate,
    answer: optional(jsonish),
    sessions: fc.array(
      fc.tuple(
        fc.oneof(fc.constantFrom('s1', 's2', 'answer_1'), jsonish),
        lmeDate,
        fc.oneof({ weight: 6, arbitrary: fc.array(lmeTurn, { maxLength: 5 }) }, { weight: 1, arbitrary: jsonish }),
      ),
      { maxLength: 4 },
    ),
    answer_session_ids: fc.oneof(fc.array(fc.oneof(fc.constantFrom('s1', 'answer_1'), jsonish), { maxLength: 3 }), jsonish),
    drop: fc.subarray(['haystack_session_ids', 'haystack_dates', 'haystack_sessions', 'answer', 'question']),
    extraId: fc.boolean(),
  })
  .map((r) => {
    const inst = {
      question_id: r.question_id,
      question_type: r.question_type,
      question: r.question,
      question_date: r.question_date,
      ...(r.answer !== undefined ? { answer: r.answer } : {}),
      haystack_session_ids: [...r.sessions.map((s) => s[0]), ...(r.extraId ? ['extra'] : [])],
      haystack_dates: r.sessions.map((s) => s[1]),
      haystack_sessions: r.sessions.map((s) => s[2]),
      answer_session_ids: r.answer_session_ids,
    }
    for (const k of r.drop) delete inst[k]
    return inst
  })
const lmeData = fc.oneof(
  { weight: 6, arbitrary: fc.array(fc.oneof({ weight: 8, arbitrary: lmeInstance }, { weight: 1, arbitrary: jsonish }), { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.json().map((t) => JSON.parse(t)) },
)

// Fake credentials are assembled at run time so no scanner mistakes this file for a leak.
const cat = (...parts) => parts.join('')
const SECRET_BITS = [
  cat('AKIA', 'IOSFODNN7EXAMPLE'),
  cat('gh', 'p_', 'aB3dE5fG7h'.repeat(3), 'J1k2L3'),
  cat('sk-', 'ant-api03-', 'Xy9_kLm3-Pq7RsT2uVw5Zab8cDe1FgH4'),
  cat('sk-', 'proj-', 'Ab3De5Gh7Jk9_Mn1Pq3-St5Vw7Yz9Bc1'),
  cat('xo', 'xb-', '123456789012-', 'AbCdEfGhIjKlMnOp'),
  cat('np', 'm_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'),
  cat('eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9', '.', 'eyJzdWIiOiIxMjM0NTY3ODkwIn0', '.', 'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c'),
  cat(
    '-----BEGIN ',
    'RSA PRIVATE KEY-----\n',
    'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7',
    '\n-----END ',
    'RSA PRIVATE KEY-----',
  ),
  cat('-----BEGIN ', 'PRIVATE KEY-----\\n', 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC'),
  cat('sk', '_live_', '4eC39HqLyjWDarjtT1zdp7dc'),
  cat('AccountKey=', 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50u=='),
  cat('&sig=', 'abcdefghijklmnopqrstuvwxyz012345'),
  cat('AIza', 'SyD3xAmPlE0123456789abcdefghijklmno'),
  cat('https://hooks.slack.com/services/', 'T00000000/B00000000/XXXXXXXX'),
]
const SECRET_SYNTAX = [
  'password',
  'DB_PASSWORD',
  'api_key',
  'apiKey',
  'token',
  'client_secret',
  'AWS_SECRET_ACCESS_KEY',
  'page_token',
  'Authorization',
  'Bearer ',
  'Basic ',
  'export ',
  '=',
  ' = ',
  ': ',
  ':',
  '=>',
  ':=',
  '"',
  "'",
  '\\"',
  '\\n',
  '\n',
  '\\',
  '--password ',
  '--token=',
  'curl -u user:',
  'https://user:',
  'postgres://app:',
  '@db.example.com',
  '?access_token=',
  '&',
  '<private>',
  '</private>',
  '<PRIVATE >',
  '[REDACTED:token]',
  '[REDACTED:',
  '[PRIVATE]',
  ' ',
  '\t',
  ',',
  '}',
  '{',
  '(',
  ')',
  '`',
  '#',
  'hunter2',
  'secret-value-123',
  'changeme',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal `${TOKEN}` is the fuzz input (an unexpanded shell reference)
  '${TOKEN}',
  'null',
  '-----BEGIN ',
  'PRIVATE KEY-----',
  '-----END ',
]
const secretText = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...SECRET_SYNTAX) },
      { weight: 2, arbitrary: fc.constantFrom(...SECRET_BITS) },
      { weight: 2, arbitrary: fc.stringMatching(/^[A-Za-z0-9_\-+/=.]{1,48}$/) },
      { weight: 2, arbitrary: smallText },
    ),
    { maxLength: 30 },
  )
  .map((parts) => parts.join(''))
const redactInput = fc.oneof({ weight: 6, arbitrary: secretText }, { weight: 2, arbitrary: smallText }, { weight: 1, arbitrary: hugeText })
const secretKey = fc.oneof(
  fc.constantFrom(
    'password',
    'DB_PASSWORD',
    'apiKey',
    'api_key',
    'token',
    'access_token',
    'max_tokens',
    'page_token',
    'client_secret',
    'Authorization',
    'auth',
    'credentials',
    'secret_key_base',
    'text',
    'env',
  ),
  nastyKey,
)
const { secretJson } = fc.letrec((tie) => ({
  secretJson: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    redactInput,
    fc.oneof(fc.integer(), fc.double({ noNaN: true }), fc.boolean(), fc.constant(null)),
    fc.array(tie('secretJson'), { maxLength: 4 }),
    fc.dictionary(secretKey, tie('secretJson'), { maxKeys: 5 }),
  ),
}))

const TIME_WORDS = [
  'yesterday',
  'today',
  'tonight',
  'this morning',
  'this afternoon',
  'this evening',
  'last night',
  'last week',
  'this week',
  'this past week',
  'last weekend',
  'this weekend',
  'last month',
  'this month',
  'last year',
  'this year',
  'this past year',
  'ago',
  'days ago',
  ' 3 days ago',
  '999 years ago',
  '1 year ago',
  'a month ago',
  '12 months ago',
  '52 weeks ago',
  'couple of weeks ago',
  'few days ago',
  'an hour ago',
  'last monday',
  'this past sunday',
  'this friday',
  'last may',
  'in december',
  'this january',
  'in 1999',
  'in 2099',
  'in 1900',
  ' ',
  '. ',
  ',',
  'YESTERDAY',
  'Last Week',
  'in',
  'this',
  'last',
]
const timeText = fc
  .array(
    fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom(...TIME_WORDS) },
      { weight: 1, arbitrary: smallText },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 1200 }).map(String) },
    ),
    { maxLength: 12 },
  )
  .map((p) => p.join(' '))
/** Instants around time-zone oddities: a day skipped (Apia 2011, Kiritimati 1994), DST at midnight (Havana, Santiago, Cairo, Beirut, São Paulo, Asunción), half-hour and 45-minute zones. */
const TRICKY_ZONES = [
  'Pacific/Apia',
  'Pacific/Kiritimati',
  'Pacific/Enderbury',
  'America/Havana',
  'America/Santiago',
  'Africa/Cairo',
  'Asia/Beirut',
  'America/Sao_Paulo',
  'America/Asuncion',
  'Asia/Gaza',
  'Asia/Tehran',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'Asia/Kathmandu',
  'Antarctica/Troll',
  'America/St_Johns',
  'Europe/Lisbon',
  'Atlantic/Azores',
  'America/Godthab',
  'Asia/Pyongyang',
]
const TRICKY_INSTANTS = [
  '2011-12-29T10:00:00Z',
  '2011-12-31T10:00:00Z',
  '1995-01-01T10:00:00Z',
  '1994-12-31T10:00:00Z',
  '2023-03-12T05:00:00Z',
  '2023-09-03T04:00:00Z',
  '2023-04-28T00:00:00Z',
  '2023-03-26T00:00:00Z',
  '2018-11-04T03:00:00Z',
  '2023-10-01T04:00:00Z',
  '2015-08-15T00:00:00Z',
  '2018-05-05T00:00:00Z',
  '2022-03-21T00:00:00Z',
].map(Date.parse)
const ALL_ZONES = [...Intl.supportedValuesOf('timeZone'), 'UTC', 'Etc/GMT+12', 'Etc/GMT-14']
const refTime = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: Date.parse('1970-01-01'), max: Date.parse('2100-01-01') }) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom(...TRICKY_INSTANTS), fc.integer({ min: -4 * 86_400_000, max: 4 * 86_400_000 }))
      .map(([t, d]) => t + d),
  },
  // The times an event can carry (transcript timestamps are 1970–9999, see timestampOf). Earlier references are out of
  // scope: before 1099, "N years ago" reaches years 0–99, which Date.UTC reads as 1900–1999, and BC years.
  { weight: 1, arbitrary: fc.integer({ min: 0, max: Date.parse('9999-12-31T23:59:59.999Z') }) },
)
const zone = fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...TRICKY_ZONES) }, { weight: 1, arbitrary: fc.constantFrom(...ALL_ZONES) })

const envValue = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '200',
      '199',
      '100000',
      '100001',
      '2000',
      '1e3',
      '0x1F4',
      ' 300 ',
      '300.5',
      '-1',
      'NaN',
      'Infinity',
      '2',
      '8192',
      '8193',
      '0',
      'builtin',
      'openai',
      'local',
      'OpenAI',
      'bm25=1',
      'bm25=1,vector=0.5,graph=0,time=0.5',
      'embedding=1',
      'bm25=11',
      'bm25=.5',
      'bm25=1,,',
      'bm25 = 1',
      'vector=1e1',
      '~',
      '~/mnemo',
      '~user',
      '/tmp/mnemo-fuzz',
      'relative/home',
      '\u0000',
      'http://localhost:1',
    ),
  },
  { weight: 2, arbitrary: smallText },
)
const ENV_KEYS = [
  'MNEMO_HOME',
  'MNEMO_CONTEXT_BUDGET',
  'MNEMO_RECALL_WEIGHTS',
  'MNEMO_EMBEDDER',
  'MNEMO_EMBED_MODEL',
  'MNEMO_EMBED_URL',
  'MNEMO_EMBED_API_KEY',
  'MNEMO_EMBED_DIM',
  'HOME',
]
const envArb = fc
  .record(Object.fromEntries(ENV_KEYS.map((k) => [k, optional(envValue)])), { requiredKeys: [] })
  .chain((env) => fc.record({ env: fc.constant(env), home: optional(envValue) }))

const ftsQuery = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.array(
          fc.oneof(
            fc.constantFrom(
              '"',
              '""',
              '*',
              '^',
              '(',
              ')',
              ':',
              '-',
              '+',
              '{',
              '}',
              'AND',
              'OR',
              'NOT',
              'NEAR',
              'NEAR(',
              ',',
              '.',
              '/',
              "'s",
              '’s',
              'body:',
              'meta:',
              'src/middleware/auth.ts',
              'validateToken',
              'jose.jwtVerify',
              '数据库迁移',
              '迁',
              '数据 库',
              'ｉｇｎｏｒｅ',
              'é',
              'e\u0301',
              'ß',
              'İ',
              '\u0000',
              '\ud800',
              '\udc00',
              '😀',
              '\u200b',
              '_',
              '__init__',
              '#',
              '@',
            ),
            smallText,
          ),
          { maxLength: 12 },
        ),
        fc.constantFrom(' ', ''),
      )
      .map(([p, sep]) => p.join(sep)),
  },
  { weight: 2, arbitrary: smallText },
  { weight: 1, arbitrary: fc.string({ unit: anyUnit, maxLength: 60 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
)

// ---------------------------------------------------------------------------
// Targets: [name, weight, arbitrary, predicate]. A predicate throws to fail.

const hookEngine = engineFactory()
const claudeEngine = engineFactory()
const codexEngine = engineFactory()
const locomoEngine = engineFactory()

function checkStoredPayload(payload, where) {
  serialisable(payload, `${where}: payload JSON-serialises`)
  walk(payload, (what, s, at) => {
    check(s.isWellFormed(), `${where}: stored ${what} is well-formed Unicode`, at)
    check(!s.includes('\u0000'), `${where}: stored ${what} has no NUL`, at)
    if (what === 'string') check(s.length <= FIELD_LIMIT, `${where}: stored string ≤ cap (${FIELD_LIMIT})`, `${at} has ${s.length}`)
  })
}

async function checkParse(result, text, deriver, engine, label) {
  const lines = text.split('\n')
  const nonBlank = lines.filter((l) => l.trim().length > 0).length
  check(result.read === nonBlank, `${label}: read = non-blank lines`, `read ${result.read}, non-blank ${nonBlank}`)
  for (const s of result.skipped)
    check(
      Number.isInteger(s.line) && s.line >= 1 && s.line <= lines.length,
      `${label}: skipped line within 1..lines`,
      `line ${s.line} of ${lines.length}`,
    )
  check(result.skipped.length <= result.read, `${label}: skipped ≤ read`)
  for (const e of result.events) {
    check(typeof e.idemKey === 'string' && e.idemKey.length > 0, `${label}: idemKey non-empty`)
    check(Number.isFinite(e.ts) && Number.isFinite(new Date(e.ts).getTime()), `${label}: event ts is a valid time`, `ts ${e.ts}`)
    serialisable(e.payload, `${label}: payload JSON-serialises`)
    const d = noThrow(`${label}: derivation never throws`, () => deriver(e))
    check(Array.isArray(d.observations), `${label}: derivation gives observations`)
  }
  await noThrowAsync(`${label}: engine.append of the parsed events never throws`, () => engine().append(result.events))
}

const TARGETS = [
  [
    'hook-raw',
    1,
    fc.tuple(
      anyEventName,
      fc.oneof(
        { weight: 3, arbitrary: smallText },
        { weight: 3, arbitrary: fc.json() },
        { weight: 3, arbitrary: hookObject.map((o) => JSON.stringify(o)) },
        { weight: 1, arbitrary: hugeText },
        { weight: 1, arbitrary: deepValue.map((v) => JSON.stringify({ session_id: 's', v })) },
      ),
    ),
    ([event, stdin]) => {
      let captured
      try {
        captured = captureClaudeHook(event, stdin, NOW, { defaultCwd: '/fuzz/project' })
      } catch (error) {
        check(MnemoError.is(error, 'INVALID_INPUT'), 'captureClaudeHook throws only MnemoError INVALID_INPUT', describeError(error))
        return
      }
      if ('skip' in captured) return
      serialisable(captured.event.payload, 'hook: payload JSON-serialises')
      check(captured.event.idemKey.length > 0, 'hook: idemKey non-empty')
    },
  ],
  [
    'hook-shaped',
    1.5,
    fc.tuple(hookEvent, hookObject),
    async ([event, obj]) => {
      const stdin = JSON.stringify(obj)
      const captured = noThrow('a valid-shaped hook payload is accepted', () =>
        captureClaudeHook(event, stdin, NOW, { defaultCwd: '/fuzz/project' }),
      )
      if ('skip' in captured) {
        check(obj.tool_name !== undefined && isOwnTool(obj.tool_name), 'hook: only own tool calls are skipped')
        return
      }
      checkStoredPayload(captured.event.payload, 'hook')
      noThrow('hook: derivation never throws', () => deriveClaudeHook(captured.event))
      await noThrowAsync('hook: engine.captureHook never throws on a valid-shaped payload', () => hookEngine().captureHook(event, stdin))
    },
  ],
  [
    'claude-transcript',
    1.5,
    fc.tuple(jsonlText(claudeRecord), fc.boolean()),
    async ([text, withProject]) => {
      const options = {
        file: '/fuzz/claude/session-abc.jsonl',
        ...(withProject ? { project: { root: '/fuzz/claude', name: 'claude' } } : {}),
      }
      const result = noThrow('parseClaudeTranscript never throws', () => parseClaudeTranscript(text, options))
      await checkParse(result, text, deriveClaudeTranscript, claudeEngine, 'claude')
      noThrow('detectTranscriptFormat never throws', () => detectTranscriptFormat(text))
    },
  ],
  [
    'codex-rollout',
    1.5,
    fc.tuple(jsonlText(codexRecord), fc.boolean()),
    async ([text, withProject]) => {
      const options = {
        file: '/fuzz/codex/rollout-2025-01-01.jsonl',
        ...(withProject ? { project: { root: '/fuzz/codex', name: 'codex' } } : {}),
      }
      const result = noThrow('parseCodexRollout never throws', () => parseCodexRollout(text, options))
      await checkParse(result, text, deriveCodexRollout, codexEngine, 'codex')
      const format = noThrow('detectTranscriptFormat never throws', () => detectTranscriptFormat(text))
      check(format === undefined || format === 'codex' || format === 'claude-code', 'detectTranscriptFormat gives a known format')
    },
  ],
  [
    'locomo',
    1,
    locomoData,
    async (data) => {
      const result = noThrow('parseLocomo never throws', () => parseLocomo(data))
      for (const s of result.skipped) check(typeof s.reason === 'string' && s.reason.length > 0, 'locomo: every skip has a reason')
      check(result.events.length + result.skipped.length >= Math.min(1, result.read), 'locomo: records are either events or skipped')
      for (const e of result.events) {
        check(e.idemKey.length > 0, 'locomo: idemKey non-empty')
        check(Number.isFinite(e.ts) && Number.isFinite(new Date(e.ts).getTime()), 'locomo: event ts is a valid time', `ts ${e.ts}`)
        serialisable(e.payload, 'locomo: payload JSON-serialises')
        noThrow('locomo: derivation never throws', () => deriveLocomoTurn(e))
      }
      await noThrowAsync('locomo: engine.append of the parsed events never throws', () => locomoEngine().append(result.events))
    },
  ],
  [
    'longmemeval',
    1,
    lmeData,
    (data) => {
      let instances
      try {
        instances = validateLongMemEval(data, 'fuzz.json')
      } catch (error) {
        check(error instanceof Error && error.constructor === Error, 'validateLongMemEval throws only a plain Error', describeError(error))
        check(error.message.startsWith('fuzz.json: '), 'validateLongMemEval error names the source', error.message)
        return
      }
      for (const inst of instances) {
        const events = noThrow('longMemEvalEvents never throws on validated data', () => longMemEvalEvents(inst))
        for (const e of events) check(Number.isFinite(e.ts) && e.idemKey.length > 0, 'longmemeval: events have a time and an idemKey')
      }
    },
  ],
  [
    'fts-query',
    1.5,
    ftsQuery,
    (() => {
      let db
      let stmt
      return (query) => {
        if (!db) {
          db = new Database(':memory:')
          db.exec("CREATE VIRTUAL TABLE search_fts USING fts5(body, parts, meta, tokenize = 'porter unicode61 remove_diacritics 2')")
          const ins = db.prepare('INSERT INTO search_fts (body, parts, meta) VALUES (?, ?, ?)')
          for (const row of [
            ['validate the token in src/middleware/auth.ts', 'validate token', 'assistant tool'],
            ['数据 据库 库迁 迁移', '', 'user prompt'],
            ['NEAR AND OR NOT', 'near', 'x'],
          ])
            ins.run(...row)
          stmt = db.prepare('SELECT rowid FROM search_fts WHERE search_fts MATCH ? LIMIT 5')
        }
        const expr = noThrow('toMatchExpression never throws', () => toMatchExpression(query))
        if (expr === undefined) return
        check(typeof expr === 'string' && expr.length > 0, 'toMatchExpression gives undefined or a non-empty string')
        noThrow(`FTS5 accepts the expression ${JSON.stringify(expr).slice(0, 200)}`, () => stmt.all(expr))
      }
    })(),
  ],
  [
    'recall',
    1,
    fc.tuple(
      fc.oneof(
        { weight: 4, arbitrary: ftsQuery },
        { weight: 1, arbitrary: timeText },
        { weight: 1, arbitrary: fc.string({ unit: anyUnit, maxLength: 16_100, minLength: 15_990 }) },
      ),
      fc.subarray(['bm25', 'vector', 'graph', 'time'], { minLength: 1 }),
    ),
    (() => {
      let engine
      return async ([query, channels]) => {
        if (!engine) {
          const clock = createManualClock(NOW)
          const store = openSqliteStore({ path: ':memory:' }, () => clock.now())
          engine = new MnemoEngine({
            store,
            clock,
            cwd: '/fuzz/project',
            contextBudgetTokens: 2000,
            timeZone: 'UTC',
            recall: { ...DEFAULT_RECALL_CONFIG, weights: { ...DEFAULT_RECALL_CONFIG.weights, vector: 0.5, graph: 0.5 } },
          })
          const project = { root: '/fuzz/project', name: 'project' }
          for (const text of [
            'validateToken lives in src/middleware/auth.ts',
            'we moved the orders DB to PostgreSQL 14 yesterday',
            '数据库迁移 finished last week',
            'Ann said the NEAR operator is confusing',
            'データベース の 移行',
          ])
            await engine.remember(text, { project })
          for (let i = 0; i < 30; i++) await engine.remember(`note ${i} about deploys, tokens and the billing service`, { project })
        }
        let hits
        try {
          hits = await engine.recall(query, { channels, limit: 5 })
        } catch (error) {
          check(MnemoError.is(error, 'INVALID_INPUT'), 'engine.recall throws only MnemoError INVALID_INPUT', describeError(error))
          return
        }
        check(Array.isArray(hits) && hits.length <= 5, 'engine.recall gives at most limit hits')
        for (const h of hits)
          check(
            Number.isFinite(h.score) && typeof h.snippet === 'string' && h.snippet.isWellFormed(),
            'recall hits have a finite score and a well-formed snippet',
          )
      }
    })(),
  ],
  [
    'redact',
    2,
    redactInput,
    (s) => {
      const once = noThrow('redactSecrets never throws', () => redactSecrets(s))
      check(typeof once === 'string', 'redactSecrets returns a string')
      const twice = noThrow('redactSecrets never throws on its output', () => redactSecrets(once))
      check(
        twice === once,
        'redactSecrets is idempotent',
        `second pass changed ${JSON.stringify(once).slice(0, 120)} → ${JSON.stringify(twice).slice(0, 120)}`,
      )
      if (!hasLoneSurrogate(s)) check(once.isWellFormed(), 'redactSecrets leaves no lone surrogate in well-formed text')
    },
  ],
  [
    'redact-value',
    1,
    secretJson,
    (value) => {
      const out = noThrow('redactValue never throws', () => redactValue(value))
      serialisable(out, 'redactValue output JSON-serialises')
      const same = (a, b, at) => {
        if (typeof a === 'string') return check(typeof b === 'string', 'redactValue keeps strings strings', at)
        if (Array.isArray(a)) {
          check(Array.isArray(b) && b.length === a.length, 'redactValue keeps array lengths', at)
          for (const [i, v] of a.entries()) same(v, b[i], `${at}[${i}]`)
          return
        }
        if (a !== null && typeof a === 'object') {
          check(b !== null && typeof b === 'object' && !Array.isArray(b), 'redactValue keeps objects objects', at)
          check(JSON.stringify(Object.keys(a)) === JSON.stringify(Object.keys(b)), 'redactValue keeps the same keys in order', at)
          for (const k of Object.keys(a)) same(a[k], b[k], `${at}.${k}`)
          return
        }
        check(Object.is(a, b), 'redactValue keeps numbers, booleans and null', at)
      }
      same(value, out, '$')
      const again = redactValue(out)
      check(JSON.stringify(again) === JSON.stringify(out), 'redactValue is idempotent')
    },
  ],
  [
    'time',
    1.5,
    fc.tuple(timeText, refTime, zone),
    ([text, ref, tz]) => {
      const ranges = noThrow('resolveRelativeTimes never throws', () => resolveRelativeTimes(text, ref, tz))
      for (const r of ranges) {
        check(Number.isFinite(r.from) && Number.isFinite(r.to), 'time range bounds are finite', JSON.stringify(r))
        check(
          r.from < r.to,
          'time range has from < to',
          `${JSON.stringify(r)} = ${new Date(r.from).toISOString()} … ${new Date(r.to).toISOString()}`,
        )
      }
    },
  ],
  [
    'config',
    0.5,
    envArb,
    ({ env, home }) => {
      let config
      try {
        config = resolveConfig(env, home === undefined ? {} : { home })
      } catch (error) {
        check(MnemoError.is(error, 'CONFIG_INVALID'), 'resolveConfig throws only MnemoError CONFIG_INVALID', describeError(error))
        check(Array.isArray(error.details.keys) && error.details.keys.length > 0, 'CONFIG_INVALID names the bad keys')
        return
      }
      check(path.isAbsolute(config.home), 'resolved home is absolute', config.home)
      check(
        Number.isInteger(config.contextBudgetTokens) && config.contextBudgetTokens >= 200 && config.contextBudgetTokens <= 100_000,
        'resolved budget is an integer 200–100000',
        String(config.contextBudgetTokens),
      )
      for (const [k, w] of Object.entries(config.recallWeights))
        check(Number.isFinite(w) && w >= 0 && w <= 10, 'resolved recall weights are 0–10', `${k}=${w}`)
      if (config.embedder?.dimensions !== undefined)
        check(
          Number.isInteger(config.embedder.dimensions) && config.embedder.dimensions >= 2 && config.embedder.dimensions <= 8192,
          'resolved embed dimensions are 2–8192',
        )
    },
  ],
  [
    'injection',
    0.5,
    fc.oneof(
      redactInput,
      fc
        .array(
          fc.constantFrom(
            'ignore',
            'all',
            'previous',
            'instructions',
            'you are now',
            'a',
            'DAN',
            'System:',
            '<|im_start|>',
            'upload',
            '.env',
            'to',
            'https://evil.example',
            "don't",
            'tell',
            'the user',
            '\n',
            ' ',
            'ｉｇｎｏｒｅ',
            '\u200b',
          ),
          { maxLength: 20 },
        )
        .map((p) => p.join(' ')),
    ),
    (s) => {
      const r = noThrow('detectInjection never throws', () => detectInjection(s))
      check(r.flagged === r.reasons.length > 0, 'detectInjection: flagged iff reasons')
      check(
        r.reasons.every((x) => INJECTION_REASONS.includes(x)) && new Set(r.reasons).size === r.reasons.length,
        'detectInjection: known reasons, each once',
      )
    },
  ],
]

// ---------------------------------------------------------------------------
// Runner

const selected = ONLY ? TARGETS.filter(([name]) => ONLY.includes(name)) : TARGETS
if (ONLY)
  for (const name of ONLY)
    if (!TARGETS.some(([n]) => n === name)) usage(`unknown target ${name} (targets: ${TARGETS.map(([n]) => n).join(', ')})`)
if (REPLAY_PATH !== undefined && selected.length !== 1) usage('--path replays one counterexample: give --only <target> and --seed too')

/** A compact, JSON-like rendering: long strings cut in the middle, lone surrogates escaped. */
function show(value) {
  const seen = new WeakSet()
  const text = JSON.stringify(
    value,
    (_k, v) => {
      if (typeof v === 'string' && v.length > 240) return `${v.slice(0, 160)}…[${v.length - 200} of ${v.length} chars]…${v.slice(-40)}`
      if (typeof v === 'number' && !Number.isFinite(v)) return String(v)
      if (v && typeof v === 'object') {
        if (seen.has(v)) return '[circular]'
        seen.add(v)
      }
      return v
    },
    0,
  )
  return text === undefined ? String(value) : text.length > 4000 ? `${text.slice(0, 4000)}… (${text.length} chars)` : text
}

function errorText(details) {
  const e = details.errorInstance
  return e instanceof Error ? e.message : String(e)
}

const totalWeight = selected.reduce((a, [, w]) => a + w, 0)
const started = Date.now()
const dist_built = new Date(statSync(path.join(DIST, 'index.js')).mtimeMs).toISOString()
console.log(
  `mnemo fuzz: seed ${SEED}, ${SECONDS} s over ${selected.length} target(s), fast-check ${fc.__version}, dist built ${dist_built}`,
)
const report = []
for (const [index, [name, weight, arbitrary, predicate]] of selected.entries()) {
  const isAsync = predicate.constructor.name === 'AsyncFunction'
  const property = isAsync
    ? fc.asyncProperty(arbitrary, async (input) => {
        await predicate(input)
      })
    : fc.property(arbitrary, (input) => {
        predicate(input)
      })
  const budgetMs = (SECONDS * 1000 * weight) / totalWeight
  const t0 = Date.now()
  const deadline = t0 + budgetMs
  const row = { name, runs: 0, failures: [], ms: 0 }
  let seed = SEED + index * 1_000_003
  if (REPLAY_PATH !== undefined) {
    const d = await fc.check(property, { seed: SEED, path: REPLAY_PATH, plugins: [fc.interruptAfterTimeLimit(SHRINK_MS * 4)] })
    row.runs += d.numRuns
    if (d.failed)
      row.failures.push({
        message: errorText(d),
        counterexample: d.counterexample?.[0],
        seed: SEED,
        path: d.counterexamplePath,
        shrinks: d.numShrinks,
        interrupted: d.interrupted,
      })
  } else {
    while (Date.now() < deadline && row.failures.length < MAX_FAILURES_PER_TARGET) {
      const explored = await fc.check(property, {
        seed,
        numRuns: 1e9,
        endOnFailure: true,
        plugins: [fc.interruptAfterTimeLimit(Math.max(1, deadline - Date.now()))],
      })
      row.runs += explored.numRuns
      if (!explored.failed) break
      // Replay the failing run and shrink it, on a time allowance of its own.
      const shrunk = await fc.check(property, { seed, path: explored.counterexamplePath, plugins: [fc.interruptAfterTimeLimit(SHRINK_MS)] })
      const best = shrunk.failed ? shrunk : explored
      const message = errorText(best)
      const invariant = message.replace(/ \(.*$/s, '').replace(/: threw .*$/s, '')
      if (!row.failures.some((f) => f.invariant === invariant)) {
        row.failures.push({
          invariant,
          message,
          counterexample: best.counterexample?.[0],
          seed,
          path: best.counterexamplePath,
          shrinks: best.numShrinks,
          interrupted: shrunk.interrupted,
        })
      } else
        row.failures.find((f) => f.invariant === invariant).again = (row.failures.find((f) => f.invariant === invariant).again ?? 0) + 1
      seed += 1
    }
  }
  row.ms = Date.now() - t0
  report.push(row)
  console.log(
    `  ${name.padEnd(18)} ${String(row.runs).padStart(8)} runs  ${String(row.failures.length).padStart(2)} failure(s)  ${(row.ms / 1000).toFixed(1).padStart(5)} s`,
  )
}

const failed = report.filter((r) => r.failures.length > 0)
console.log(
  `\nsummary: ${report.reduce((a, r) => a + r.runs, 0)} runs in ${((Date.now() - started) / 1000).toFixed(1)} s; ${failed.length === 0 ? 'no failures' : `${failed.reduce((a, r) => a + r.failures.length, 0)} failure(s) in ${failed.map((r) => r.name).join(', ')}`}`,
)
for (const r of failed) {
  for (const f of r.failures) {
    console.log(`\n[${r.name}] ${f.message}`)
    console.log(
      `  counterexample (after ${f.shrinks} shrink steps${f.interrupted ? ', shrinking cut short' : ''}${f.again ? `; seen ${f.again} more time(s)` : ''}):`,
    )
    console.log(`  ${show(f.counterexample)}`)
    console.log(`  replay: node scripts/fuzz.mjs --only ${r.name} --seed ${f.seed} --path ${JSON.stringify(f.path)}`)
  }
}
process.exit(failed.length > 0 ? 1 : 0)
