import { z } from 'zod'
import { describeValue, invalidInput, type MnemoError } from './errors.js'
import { CHANNEL_NAMES, HOOK_AGENTS, MAX_EVENT_TS, MEMORY_KINDS, SURFACE_AGENTS, type MemoryKind } from './types.js'

/**
 * Input schemas shared by every surface: MCP tools, REST bodies and query
 * strings, and (where it wants them) the CLI. One schema per use case, one
 * helper (`parseInput`) that turns a bad input into the same `INVALID_INPUT`
 * message everywhere.
 *
 * Two layers, on purpose:
 * - the *shape* of each schema checks only types and required keys. MCP tools
 *   register `schema.shape`, so the SDK rejects a malformed call (a missing
 *   `query`, `limit: "ten"`) before the tool runs, as MCP expects;
 * - the *limits* (ranges, lengths, "not blank") are JSON Schema keywords in
 *   each field's metadata. They are advertised wherever a JSON Schema is
 *   generated (MCP tool listings, OpenAPI) and enforced by the schema itself
 *   (an object-level check), so an out-of-range value reaches the handler and
 *   is reported by `parseInput` with one message on REST and MCP alike:
 *   `limit must be an integer 1–100 (got 0)`.
 */

/** Longest query or memory text, characters. */
export const MAX_INPUT_TEXT_CHARS = 16_000
/** Longest project argument (a name or a path), characters. */
const MAX_PROJECT_CHARS = 4096

/** The JSON Schema keywords a field may carry as limits; `checkLimits` enforces exactly these. */
interface Limits {
  type?: 'integer'
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  minItems?: number
  /** Only `\S` (at least one non-space character) is used and understood. */
  pattern?: '\\S'
}

/** Attaches limits to a field: advertised in its JSON Schema, enforced by `inputObject`. */
export function limited<T extends z.ZodType>(schema: T, limits: Limits): T {
  return schema.meta({ ...limits })
}

/** Free text of 1–`max` characters with at least one non-space character. */
function text(max: number): z.ZodString {
  return limited(z.string(), { minLength: 1, maxLength: max, pattern: '\\S' })
}

/** An integer in `min`–`max`. */
export function integer(min: number, max: number): z.ZodNumber {
  return limited(z.number(), { type: 'integer', minimum: min, maximum: max })
}

/** A project argument: a project name, or a path inside the project. */
export const projectField = limited(z.string(), { minLength: 1, maxLength: MAX_PROJECT_CHARS }).describe(
  'Project name, or a path inside the project (absolute on the HTTP server).',
)

/** An id as returned by recall, sessions or remember (`obs_…`, `mem_…`, `ses_…`). */
export const idField = limited(z.string(), { minLength: 1, maxLength: 64 }).describe('An id: obs_…, mem_… or ses_….')

/** A z.object whose fields' limits (see `limited`) are enforced on parse; its `.shape` checks types only. */
export function inputObject<S extends z.ZodRawShape>(shape: S): z.ZodObject<S> {
  return z.object(shape).superRefine((value, ctx) => checkLimits(shape, value as Record<string, unknown>, ctx))
}

/** Inputs of a recall. */
export const recallInput = inputObject({
  query: text(MAX_INPUT_TEXT_CHARS).describe('What to look for: words, identifiers, file paths or CJK text.'),
  project: projectField.optional(),
  session: idField.optional().describe('Only this session (a ses_… id).'),
  limit: integer(1, 100).optional().describe('Most hits, 1–100. Default 10.'),
  channels: limited(z.array(z.enum(CHANNEL_NAMES)), { minItems: 1 })
    .optional()
    .describe('Channels to use (ablation). Default: every channel with a weight.'),
  explain: z
    .boolean()
    .optional()
    .describe('Add to each hit the channels that found it, with its rank and raw score in each. Default false.'),
})

/** Inputs of remember. */
export const rememberInput = inputObject({
  text: text(MAX_INPUT_TEXT_CHARS).describe('The memory: a decision, fact, preference or lesson worth knowing later.'),
  kind: z
    .enum(MEMORY_KINDS as readonly [MemoryKind, ...MemoryKind[]])
    .optional()
    .describe('decision | fact | preference | lesson. Default fact.'),
  project: projectField.optional(),
  scope: z
    .enum(['project', 'user'])
    .optional()
    .describe(
      'project (default): this project\'s memory. user: the user\'s own, recalled in every project of this user (a preference like "I use pnpm"); project is then ignored.',
    ),
})

/** Inputs of forget. */
export const forgetInput = inputObject({
  id: idField.describe('The observation (obs_…) or memory (mem_…) to forget.'),
  chain: z
    .boolean()
    .optional()
    .describe(
      'For a memory: forget every version of its chain, not only this one (forgetting only the newest makes the previous version current again). Default false.',
    ),
})

/** Inputs of show. */
export const showInput = inputObject({ id: idField })

/** Input of the session timeline (MCP `memory_timeline`). */
export const timelineInput = inputObject({
  session: idField.describe('The session (ses_…) whose observations to list, in time order.'),
  offset: limited(z.number().int(), { minimum: 0, maximum: 100_000 }).optional().describe('Observations to skip. Default 0.'),
  limit: limited(z.number().int(), { minimum: 1, maximum: 200 }).optional().describe('Most observations, 1–200. Default 50.'),
})

/** Input of an export (MCP `memory_export`): one project, as mnemo's JSONL export or Markdown. */
export const exportInput = inputObject({
  format: z.enum(['jsonl', 'markdown']).optional().describe('jsonl (lossless, re-importable) or markdown (for people). Default markdown.'),
})

/** Inputs of a sessions listing. */
export const sessionsInput = inputObject({
  project: projectField.optional(),
  limit: integer(1, 200).optional().describe('Most sessions, 1–200. Default 20.'),
})

/** Inputs of the context block. */
export const contextInput = inputObject({
  project: projectField.optional(),
  budget: integer(200, 100_000).optional().describe('Token budget, 200–100000. Default: the configured budget (2000).'),
  excludeSession: limited(z.string(), { minLength: 1, maxLength: 512 })
    .optional()
    .describe("The agent's session id of the session asking: left out of the recent sessions (it is the current one)."),
  agent: z
    .enum(SURFACE_AGENTS)
    .optional()
    .describe(
      "The agent asking (hooks send it): under agent isolation (the server's MNEMO_AGENT_SCOPE=own) the block holds that agent's data only.",
    ),
})

/** One Claude Code hook delivery: the event name and the JSON payload the hook got on stdin. */
export const hookEventInput = inputObject({
  event: limited(z.string(), { minLength: 1, maxLength: 64, pattern: '\\S' }).describe(
    'Hook event name: SessionStart, UserPromptSubmit, PostToolUse, …',
  ),
  payload: z.record(z.string(), z.unknown()).describe('The hook payload exactly as Claude Code wrote it (session_id, cwd, …).'),
  agent: z.enum(HOOK_AGENTS).optional().describe('The agent that sent it (field names are mapped); default claude-code.'),
  at: z.iso
    .datetime({ offset: true })
    .refine((v) => Date.parse(v) >= 0 && Date.parse(v) <= MAX_EVENT_TS, 'must be a time in 1970–9999')
    .optional()
    .describe(
      'When the hook fired (ISO 8601, 1970–9999), for events delivered late from a client spool; default: when the server receives it.',
    ),
  projectRoot: limited(z.string(), { minLength: 1, maxLength: MAX_PROJECT_CHARS })
    .optional()
    .describe(
      'The project root the client resolved (its git top-level), absolute, containing payload.cwd; default: resolved from payload.cwd on the server, where the folder may not exist.',
    ),
})

/** What a hook asks the team server to inject for one event (POST /v1/injections). */
export const hookInjectionInput = inputObject({
  event: limited(z.string(), { minLength: 1, maxLength: 64, pattern: '\\S' }).describe(
    'mnemo event name: UserPromptSubmit (per-prompt recall and corrections), PreToolUse or PostToolUse (file hints); any other injects nothing.',
  ),
  payload: z
    .record(z.string(), z.unknown())
    .describe('The hook payload as POST /v1/events got it: `session_id`, `cwd` (absolute), and `prompt` or `tool_input`.'),
  agent: z
    .enum(HOOK_AGENTS)
    .optional()
    .describe('The agent asking: the block goes out through its channel (`hookEventName`); default claude-code.'),
  projectRoot: hookEventInput.shape.projectRoot,
  // The range of MIN_PROMPT_BUDGET–MAX_PROMPT_BUDGET (context/prompt-block.ts), which the engine checks again.
  budget: integer(100, 4000).optional().describe("Most tokens of the block, 100–4000 (the client's MNEMO_PROMPT_RECALL). Default 300."),
  ack: z
    .boolean()
    .optional()
    .describe(
      "True: the server records what the block shows only when the client confirms it injected it, by posting the answer's `injection.ack` to POST /v1/injections/ack. Default false: recorded when the answer is computed.",
    ),
})

/**
 * What a client confirms it injected (POST /v1/injections/ack): the `injection.ack` of a POST /v1/injections answer
 * asked for with `ack: true`, sent back as it came.
 */
export const injectionAckInput = inputObject({
  agent: z.enum(HOOK_AGENTS).describe('The agent the block was computed for.'),
  session: limited(z.string(), { minLength: 1, maxLength: 1024 }).describe(
    "The agent's own session id (`session_id` of the hook payload).",
  ),
  shown: z
    .array(
      z.object({
        itemId: z.string().min(1).max(MAX_PROJECT_CHARS).describe('The id of an item shown or corrected, or the name of a file looked up.'),
        what: z.enum(['item', 'correction', 'file']),
      }),
    )
    .max(1000)
    .describe("What the block showed, as the session's injection record keeps it."),
})

/** The limits a field carries, looking through `.optional()`. */
function limitsOf(field: z.ZodType): Limits | undefined {
  const inner = field instanceof z.ZodOptional ? (field.unwrap() as z.ZodType) : field
  return inner.meta() as Limits | undefined
}

/** The problem with `value` under `limits`, as the words after the field's name; undefined when it is fine. */
function limitProblem(limits: Limits, value: unknown): string | undefined {
  const { minimum, maximum, minLength, maxLength, minItems } = limits
  if (typeof value === 'number') {
    const range = minimum !== undefined && maximum !== undefined ? ` ${minimum}–${maximum}` : ''
    const noun = limits.type === 'integer' ? 'an integer' : 'a number'
    if (limits.type === 'integer' && !Number.isInteger(value)) return `must be ${noun}${range}`
    if ((minimum !== undefined && value < minimum) || (maximum !== undefined && value > maximum)) return `must be ${noun}${range}`
  }
  if (typeof value === 'string') {
    if (limits.pattern === '\\S' && !/\S/.test(value)) return 'must not be blank'
    if ((minLength !== undefined && value.length < minLength) || (maxLength !== undefined && value.length > maxLength)) {
      return `must be ${minLength ?? 0}–${maxLength ?? '∞'} characters`
    }
  }
  if (Array.isArray(value) && minItems !== undefined && value.length < minItems)
    return `must list at least ${minItems} item${minItems === 1 ? '' : 's'}`
  return undefined
}

function checkLimits(shape: z.ZodRawShape, value: Record<string, unknown>, ctx: z.RefinementCtx): void {
  for (const [key, field] of Object.entries(shape)) {
    const v = value[key]
    if (v === undefined) continue
    const limits = limitsOf(field as z.ZodType)
    const problem = limits && limitProblem(limits, v)
    if (problem) ctx.addIssue({ code: 'custom', path: [key], message: problem, input: v })
  }
}

/** The value at `path` inside `input`, or undefined. */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input
  for (const key of path) {
    if (typeof v !== 'object' || v === null) return undefined
    v = (v as Record<PropertyKey, unknown>)[key]
  }
  return v
}

/** The words after the field name for one zod issue. */
function issueProblem(issue: z.core.$ZodIssue, value: unknown): string {
  switch (issue.code) {
    case 'invalid_type': {
      if (value === undefined) return 'is required'
      const expected = issue.expected === 'record' ? 'object' : issue.expected
      return `must be ${/^[aeiou]/.test(expected) ? 'an' : 'a'} ${expected}`
    }
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => String(v)).join(', ')}`
    case 'unrecognized_keys':
      return `has unknown key${issue.keys.length === 1 ? '' : 's'} ${issue.keys.join(', ')}`
    default:
      return issue.message
  }
}

/**
 * Turns a zod error into the one `INVALID_INPUT` error every surface shows:
 * `<path> <problem> (got <value>)`, for the first issue, with `details.path`
 * the dotted key path (`limit`, `payload.cwd`), or `root` for the whole input.
 *
 * @param root - What the whole input is called on this surface (`body` on REST). Default `input`.
 * @param input - The input that was parsed, to quote the offending value when the issue does not carry it.
 * @example
 * toInvalidInput(recallInput.safeParse({ query: 'x', limit: 0 }).error!) // limit must be an integer 1–100 (got 0)
 */
function toInvalidInput(error: z.ZodError, root = 'input', input?: unknown): MnemoError<'INVALID_INPUT'> {
  const issue = error.issues[0]
  if (!issue) return invalidInput(root, `${root} is invalid`)
  const path = issue.path.length === 0 ? root : issue.path.map(String).join('.')
  const value = 'input' in issue ? issue.input : valueAt(input, issue.path)
  return invalidInput(path, `${path} ${issueProblem(issue, value)} (got ${describeValue(value)})`)
}

/**
 * Parses `input` with one of the schemas above (or any zod schema).
 *
 * @param root - What the whole input is called in messages (`body`, `query string`). Default `input`.
 * @returns The parsed value (unknown keys dropped).
 * @throws {MnemoError} `INVALID_INPUT` — see `toInvalidInput`.
 * @example
 * const { query, limit } = parseInput(recallInput, args)
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, root = 'input'): z.output<S> {
  const result = schema.safeParse(input, { reportInput: true })
  if (!result.success) throw toInvalidInput(result.error, root, input)
  return result.data
}
