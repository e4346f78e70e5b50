/**
 * Structured output on the wire: the JSON Schema sent for a zod schema (and
 * its OpenAI strict-mode variant), reading JSON out of a model's text
 * answer, and the ask → validate → correct-once loop every adapter runs.
 */
import { z } from 'zod'
import { attachUsage, type LlmResult, type LlmUsage } from './llm.js'
import type { HttpClient } from './llm-http.js'

export type JsonObject = Record<string, unknown>

/** The schema as sent: JSON Schema of an object (a non-object root is wrapped as `{ value: … }`). */
export interface WireSchema {
  name: string
  /** Full JSON Schema (without `$schema`). */
  json: JsonObject
  wrapped: boolean
}

/** The {@link WireSchema} of `schema`, named `schemaName` with characters outside `[A-Za-z0-9_-]` made `_` (at most 64; `answer` when empty). */
export function wireSchema(schema: z.ZodType, schemaName: string): WireSchema {
  const name = schemaName.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'answer'
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { unrepresentable: 'any' }) as JsonObject
  if (json.type === 'object') return { name, json, wrapped: false }
  return { name, json: { type: 'object', properties: { value: json }, required: ['value'], additionalProperties: false }, wrapped: true }
}

/**
 * The JSON Schema for OpenAI's strict mode: string length limits (not in its
 * supported subset) move into the description, so the server accepts the
 * schema; zod still enforces them on the answer. `strict` is false when some
 * object has an optional property (strict mode requires all of them).
 */
export function strictVariant(json: JsonObject): { schema: JsonObject; strict: boolean } {
  let strict = true
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit)
    if (typeof node !== 'object' || node === null) return node
    const out: JsonObject = {}
    for (const [key, value] of Object.entries(node as JsonObject)) {
      out[key] =
        key === 'properties' && typeof value === 'object' && value !== null
          ? Object.fromEntries(Object.entries(value as JsonObject).map(([k, v]) => [k, visit(v)]))
          : visit(value)
    }
    const min = out.minLength
    const max = out.maxLength
    if (typeof min === 'number' || typeof max === 'number') {
      delete out.minLength
      delete out.maxLength
      const limit =
        typeof min === 'number' && typeof max === 'number'
          ? `${min}–${max} characters`
          : typeof max === 'number'
            ? `at most ${max} characters`
            : `at least ${min} characters`
      out.description = typeof out.description === 'string' ? `${out.description} (${limit})` : limit
    }
    if (out.type === 'object' && typeof out.properties === 'object' && out.properties !== null) {
      const required = Array.isArray(out.required) ? (out.required as string[]) : []
      if (Object.keys(out.properties).some((k) => !required.includes(k))) strict = false
      out.additionalProperties = false
    }
    return out
  }
  const schema = visit(json) as JsonObject
  return { schema, strict }
}

/** A model answer read as JSON, or why it could not be. */
export type Candidate = { json: unknown } | { error: string }

/** Reads JSON from a model's text answer: tolerates code fences, a leading `<think>` block and prose around one object. */
export function parseJsonText(text: string): Candidate {
  let t = text.trim().replace(/^<think>[\s\S]*?<\/think>\s*/i, '')
  const fence = /^```[a-zA-Z]*\s*\n?([\s\S]*?)\n?\s*```$/.exec(t)
  if (fence) t = (fence[1] ?? '').trim()
  if (t === '') return { error: 'the answer was empty' }
  try {
    return { json: JSON.parse(t) as unknown }
  } catch (error) {
    const start = t.indexOf('{')
    const end = t.lastIndexOf('}')
    if (start >= 0 && end > start) {
      try {
        return { json: JSON.parse(t.slice(start, end + 1)) as unknown }
      } catch {
        // fall through: report the first error
      }
    }
    return { error: `the answer is not valid JSON (${error instanceof Error ? error.message : String(error)})` }
  }
}

/** Up to 8 zod issues as `path: message` joined by `; ` (paths under `value` when the schema was wrapped). */
export function describeIssues(issues: readonly z.core.$ZodIssue[], wrapped: boolean): string {
  const lines = issues.slice(0, 8).map((issue) => {
    const path = (wrapped ? ['value', ...issue.path] : issue.path).map(String).join('.')
    return `${path === '' ? '(root)' : path}: ${issue.message}`
  })
  if (issues.length > 8) lines.push(`…and ${issues.length - 8} more`)
  return lines.join('; ')
}

/** One model turn as a provider adapter reports it. */
interface Turn {
  candidate: Candidate
  usage: LlmUsage
  status: number
  /** The answer stopped at the output-token limit. */
  truncated: boolean
}

/**
 * Runs the ask → validate → (once) correct → validate loop. `ask` sends the
 * conversation, with `correction` appended to it after the previous answer
 * when given.
 */
export async function completeValidated<T>(
  http: HttpClient,
  wire: WireSchema,
  schema: z.ZodType<T>,
  ask: (correction: string | undefined) => Promise<Turn>,
): Promise<LlmResult<T>> {
  const usage: LlmUsage = { inputTokens: 0, outputTokens: 0 }
  let correction: string | undefined
  try {
    for (let round = 0; ; round++) {
      const turn = await ask(correction)
      usage.inputTokens += turn.usage.inputTokens
      usage.outputTokens += turn.usage.outputTokens
      let problem: string
      if ('json' in turn.candidate) {
        const raw = wire.wrapped ? (turn.candidate.json as { value?: unknown } | null)?.value : turn.candidate.json
        const parsed = schema.safeParse(raw)
        if (parsed.success) return { value: parsed.data, usage }
        problem = `the answer does not match the schema: ${describeIssues(parsed.error.issues, wire.wrapped)}`
      } else {
        problem = turn.candidate.error
      }
      if (turn.truncated) problem = `${problem}; the answer was cut at the output-token limit, so answer more briefly`
      if (round >= 1) {
        throw http.fail(
          `returned HTTP ${turn.status}, but ${problem.slice(0, 600)} (after one corrective retry; schema ${wire.name})`,
          turn.status,
          new Error(problem),
        )
      }
      correction = `Your previous answer was rejected: ${problem.slice(0, 2000)}\nAnswer again with only the JSON value for the ${wire.name} schema, fixing these problems.`
    }
  } catch (error) {
    attachUsage(error, usage)
    throw error
  }
}
