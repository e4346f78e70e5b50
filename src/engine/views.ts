import { z } from 'zod'
import { injectionAckInput } from '../core/schemas.js'

export {
  fromHitJson,
  toHitJson,
  toImportJson,
  toListedObservationJson,
  toMemoryJson,
  toObservationJson,
  toSessionJson,
} from './view-mappers.js'

/**
 * The JSON every surface returns (CLI `--json`, REST, MCP show), as zod
 * schemas (they become the OpenAPI response schemas); the mappers that
 * produce it live in `view-mappers.ts`, each typed by its schema here, so the
 * document cannot promise a field the code does not send.
 * Times are ISO-8601 UTC; absent values are `null`, never missing.
 */

const iso = z.string().describe('ISO-8601 time, UTC.')
/** A count: a non-negative integer (declared as JSON Schema, without zod's safe-integer bounds in the document). */
const count = z.number().meta({ type: 'integer', minimum: 0 })

export const hitJson = z.object({
  id: z.string().describe('obs_… or mem_…'),
  type: z.enum(['observation', 'memory']),
  kind: z.string().describe('Observation kind (prompt, tool, error, …) or memory kind (decision, fact, …).'),
  project: z.string(),
  projectId: z.string(),
  sessionId: z.string().nullable(),
  time: iso,
  score: z.number().describe('Fused relevance, higher is better.'),
  snippet: z.string(),
  sourceRef: z.string().nullable(),
  flags: z.array(z.string()).describe('Why the text is suspect (injection:…); empty when it is not.'),
  channels: z
    .record(z.string(), z.object({ rank: count, score: z.number() }))
    .optional()
    .describe('With explain: the channels that found it, with its 1-based rank and raw score in each.'),
  viaNeighbor: z.boolean().optional().describe('With explain: it came in as the neighbour of a matching turn.'),
  fusedRank: count.optional().describe('With explain: its 1-based rank in the fused list before the re-ranker reordered the first 100.'),
})

export const recallJson = z.object({
  query: z.string(),
  hits: z.array(hitJson).describe('Best first.'),
  warnings: z.array(z.string()).describe('Problems recall worked around (a provider outage, missing vectors).'),
})

export const memoryJson = z.object({
  id: z.string(),
  kind: z.string().describe('decision, fact, preference, lesson (semantic), summary (episodic) or procedure (procedural).'),
  project: z.string().nullable(),
  projectId: z.string(),
  createdAt: iso,
  seenCount: count,
  flags: z.array(z.string()),
  text: z.string(),
  validFrom: iso,
  validTo: iso.nullable().describe('When a newer version replaced it; null while current.'),
  supersedes: z.string().nullable(),
  supersededBy: z.string().nullable(),
  review: z.string().nullable().describe('Why it needs a look (depends-on-superseded:<id>).'),
  pinned: z.boolean(),
  archivedAt: iso.nullable(),
  sources: z.array(z.string()).describe('Provenance: the observation ids it was derived from.'),
  confidence: z
    .number()
    .nullable()
    .describe('0–1: how sure the extraction that derived it was; null for a stated memory, a summary or a procedure.'),
})

export const rememberJson = z.object({
  created: z.boolean().describe('False when the same text was already remembered.'),
  memory: memoryJson,
})

export const observationJson = z.object({
  id: z.string(),
  kind: z.string(),
  role: z.string(),
  project: z.string().nullable(),
  projectId: z.string(),
  sessionId: z.string(),
  time: iso,
  tool: z.string().nullable(),
  files: z.array(z.string()),
  sourceRef: z.string().nullable(),
  flags: z.array(z.string()),
  text: z.string(),
})

export const sessionJson = z.object({
  id: z.string(),
  project: z.string().nullable(),
  projectId: z.string(),
  agent: z.string(),
  sessionKey: z.string().describe("The agent's own session id."),
  user: z.string().nullable().describe('The user it was captured for; null when shared (no user).'),
  startedAt: iso,
  lastEventAt: iso,
  endedAt: iso.nullable(),
  title: z.string().nullable(),
  observations: count,
})

export const sessionsJson = z.object({ sessions: z.array(sessionJson).describe('Newest first.') })

export const sessionDetailJson = z.object({
  session: sessionJson,
  observations: z.array(observationJson).describe('Oldest first; the first 500.'),
})

export const contextJson = z.object({
  project: z.string(),
  text: z.string().describe('The delimited block, ready to inject.'),
  tokens: count,
  budgetTokens: count,
  memoryIds: z.array(z.string()),
  sessionIds: z.array(z.string()),
  omitted: count.describe('Items left out because the budget ran out.'),
  ack: injectionAckInput
    .optional()
    .describe(
      'Asked for with `recordSession` and `ack=true`: not recorded yet; post it as it is to POST /v1/injections/ack once the block is injected.',
    ),
})

/** Body of POST /v1/injections. */
export const hookInjectionJson = z.object({
  injection: z
    .object({
      hookEventName: z.string().describe("The agent's own event name for `hookSpecificOutput` (Gemini CLI: BeforeAgent, AfterTool)."),
      text: z.string().describe('The block (`<mnemo-recall>` or file hints), ready to inject.'),
      ack: injectionAckInput
        .optional()
        .describe('Asked for with `ack: true`: not recorded yet; post it as it is to POST /v1/injections/ack once the block is injected.'),
    })
    .nullable()
    .describe('Null: nothing to inject.'),
})

/** Body of POST /v1/injections/ack. */
export const injectionAckJson = z.object({
  recorded: count.describe("Rows of the session's injection record confirmed."),
})

export const forgottenJson = z.object({
  forgotten: z.object({
    id: z.string(),
    type: z.enum(['observation', 'memory']),
    events: count.describe('Events deleted from the log.'),
    alsoRecorded: z
      .array(z.string())
      .describe(
        'Observations through which another capture path (hooks, an imported transcript) recorded the same step: forget them too to remove it everywhere.',
      ),
    restored: z
      .object({ id: z.string(), text: z.string() })
      .optional()
      .describe(
        'The older version of the memory that is current again because its newest version was forgotten; forget it too, or forget with chain, to remove every version.',
      ),
    versions: z.array(z.string()).optional().describe('With chain: every version of the memory forgotten, oldest first.'),
  }),
})

export const eventAcceptedJson = z.object({
  stored: z.boolean().describe('False for a duplicate delivery or an event mnemo deliberately skips (its own tool calls).'),
})

/** One background job of `mnemo serve`. */
export const jobJson = z.object({
  name: z.string(),
  everyMinutes: z.number().describe('Minutes between runs; 0 when the schedule is off.'),
  running: z.boolean(),
  lastRunAt: iso.nullable(),
  nextRunAt: iso.nullable(),
  lastResult: z.string().nullable().describe('What the last successful run did, in words.'),
  lastError: z.string().nullable().describe('Why the last run failed, when it did.'),
})

export const statusJson = z.object({
  home: z.string(),
  database: z.string(),
  counts: z.object({ events: count, projects: count, sessions: count, observations: count, memories: count }),
  bytes: count,
  lastCaptureAt: iso.nullable(),
  projects: z
    .array(
      z.object({
        name: z.string(),
        root: z.string(),
        lastActivityAt: iso.nullable().describe('When anything was last captured or remembered in it; null when nothing was.'),
      }),
    )
    .describe('Every project, to name in `project`; the one with the latest activity first.'),
  channels: z
    .array(
      z.object({
        name: z.string(),
        weight: z.number(),
        on: z.boolean().describe('False for a weight of 0 or an embedder not configured: recall does not use it.'),
      }),
    )
    .describe('The recall channels, as `mnemo status` shows them.'),
  spool: z.object({ pending: count, bad: count }),
  errors: z.array(z.object({ at: z.string(), where: z.string(), code: z.string(), message: z.string() })).describe('The last 5 failures.'),
  server: z.object({ version: z.string(), pid: count, startedAt: iso }),
  jobs: z.array(jobJson).describe('Background work of the server (consolidation), with its last outcome.'),
})

export const healthJson = z.object({ ok: z.literal(true), name: z.literal('mnemo'), version: z.string() })

export const importJson = z.object({
  files: z.array(
    z.object({
      file: z.string(),
      format: z.string().nullable(),
      read: count,
      imported: count,
      duplicates: count,
      observations: count,
      covered: count.describe(
        'Steps not stored again: another capture path (hooks, another import) had already stored them in the same session.',
      ),
      skipped: z.array(z.object({ line: z.union([z.number(), z.string()]), reason: z.string() })),
      unknownTypes: z.record(z.string(), z.number()),
      error: z.string().nullable(),
    }),
  ),
  read: count,
  imported: count,
  duplicates: count,
  observations: count,
  covered: count.describe(
    'Steps not stored again: another capture path (hooks, another import) had already stored them in the same session.',
  ),
  skipped: count,
  unknown: count,
})

export const openApiJson = z.object({ openapi: z.string() }).loose().describe('This document.')

/** An observation as listed for browsing: with its session's agent and the log sequence number it came from. */
export const listedObservationJson = observationJson.extend({
  agent: z.string(),
  seq: count.describe('Sequence number of the event it was derived from; pages and live tails are cut by it.'),
})

export const observationsPageJson = z.object({
  observations: z.array(listedObservationJson).describe('Newest first.'),
  nextBefore: count.nullable().describe('Pass as `before` for the next (older) page; null at the end.'),
})

export const timelineJson = z.object({
  session: sessionJson,
  observations: z
    .array(
      observationJson.extend({ derivedMemories: z.array(z.string()).describe('Ids of the memories whose provenance names this step.') }),
    )
    .describe('In time order.'),
  total: count.describe("The session's number of observations."),
  offset: count,
  position: count.nullable().describe('With `at`: the 0-based place of that observation in the session; otherwise null.'),
})

export const memoriesPageJson = z.object({
  memories: z.array(memoryJson).describe('Pinned first, then newest.'),
  total: count.describe('How many match, over all pages.'),
})

export const memoryHistoryJson = z.object({
  chain: z.array(memoryJson).describe('Every version, oldest first; the one with validTo null is current.'),
  sources: z
    .array(observationJson)
    .describe('Provenance: the observations any version of the chain was derived from that still exist, oldest first.'),
})

export const memoryUpdatedJson = z.object({ memory: memoryJson.describe('The memory after the change; for a text edit, the new version.') })

const entityJson = z.object({
  id: count,
  type: z.string().describe('name, file, symbol, tool, url, date, …'),
  name: z.string(),
  docs: count.describe('Documents mentioning it.'),
})

export const graphJson = z.object({
  center: entityJson.nullable().describe('The entity asked for (best match); null without one or when none matches.'),
  nodes: z.array(entityJson).describe('The center first, then the entities mentioned with it; or the most mentioned entities.'),
  edges: z.array(z.object({ source: count, target: count, weight: count.describe('Documents mentioning both.') })),
  mentions: z.array(hitJson).describe('Documents mentioning the center (score 0: not ranked).'),
})
