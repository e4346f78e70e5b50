import { z } from 'zod'
import { MAX_QUERY_CHARS } from './fact-query.js'
import { FACT_STATUSES } from './fact-types.js'

// Input schemas of the fact surfaces (MCP tools, REST routes): shapes only; the engine checks values against collections.

/** The fact query language in a few lines: what the query tool's description and `facts query --help` give. */
export const FACT_QUERY_GRAMMAR = [
  'from <collection> [where <cond>] [as of <date>] [status <done|planned|cancelled|hypothetical|any>] <verb>',
  'verb: count | sum|avg|min|max|distinct <field> | list [f, …] [order by f [desc]] [limit n]',
  '  | argmax|argmin <field> [return <field>] [ties all|first|earliest <f>|latest <f>]',
  '  | group by <field>|day|week|month|quarter|half|year(<date field>) [count|sum f|avg f|…] (top n [ties …] | share >= N% | all)',
  '  | compare <count|sum f|…> over <date field> <period> vs <period>',
  'cond: f = != < <= > >= v | f between a and b | f in (a, b) | f in <period> | f has v (list field) | f contains "t" | f is [not] null; and / or / not / ( )',
  'values: "text" 12 3.5 2024-06-01 2024-06-01T10:00Z 07:30 true false; periods: 2024 2024-Q4 2024-H1 2024-03 2024-03-05 2024-01-01..2024-02-15; first year / last month (the first / last holding records, compare only); this week / previous month / this year / past 7 days (on the calendar of today, in the user\'s time zone: "last week" is previous week)',
  'Aggregates count status done unless status is given. Example: from trips where purpose = "business" and date in 2024 avg duration_days',
].join('\n')

const name = z.string().min(1).max(64).describe('A collection name: letters, digits, _ (starting with a letter).')
const status = z.enum(FACT_STATUSES).optional().describe('done (default), planned, cancelled or hypothetical.')
const record = z.record(z.string(), z.unknown())

export const factRecordInput = z.object({
  collection: name,
  records: z
    .union([record, z.array(record).min(1).max(10_000)])
    .describe('One record (field → value) or an array of them. An unknown collection is inferred from them; new fields are added.'),
  status,
})

export const factUpdateInput = z.object({
  id: z.string().min(1).max(64).describe('A record id (fct_…).'),
  values: record.describe('The fields to change.'),
  status,
})

export const factDeleteInput = z.object({ id: z.string().min(1).max(64).describe('A record id (fct_…).') })

export const factQueryInput = z.object({
  query: z.string().min(1).max(MAX_QUERY_CHARS).describe(`A query in the fact query language:\n${FACT_QUERY_GRAMMAR}`),
  explain: z.boolean().optional().describe('Also return the SQL statements run, with their parameters.'),
})

const stateKey = z.string().min(1).max(200).describe('The stable key of an entity-attribute fact (team_lead, trip_T-12_total).')
const stateValue = z.string().min(1).max(2000)

export const factStateInput = z.object({ key: stateKey })

export const factStateSetInput = z.object({
  key: stateKey,
  value: stateValue.describe('Its new value. Its dependency rules run: dependants take a declared value or become uncertain.'),
})

export const factResolveInput = z.object({
  key: stateKey,
  value: stateValue
    .optional()
    .describe('The value it has now, when it changed; leave it out to confirm the value it had (nothing downstream changes then).'),
})

export const factDeclareInput = z.object({
  collection: z
    .object({
      name,
      description: z.string().max(500).optional(),
      fields: z.array(z.record(z.string(), z.unknown())).min(1).max(64),
      identity: z.array(z.string()).optional(),
      timeField: z.string().optional(),
    })
    .describe(
      '{ name, fields: [{ name, type: string|integer|number|money|boolean|date|datetime|time|enum|list|reference, values?, items?, currency?, synonyms? }], identity?, timeField? }',
    ),
})
