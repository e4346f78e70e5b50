import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { parseInput } from '../../core/schemas.js'
import {
  FACT_QUERY_GRAMMAR,
  factDeclareInput,
  factDeleteInput,
  factQueryInput,
  factRecordInput,
  factResolveInput,
  factStateInput,
  factStateSetInput,
  factUpdateInput,
} from '../../core/facts/fact-inputs.js'
import { describeType } from '../../core/facts/fact-values.js'
import type { ProjectRef } from '../../core/types.js'
import type { MnemoEngine } from '../../engine/mnemo.js'
import { errorResult, okResult } from './tool-result.js'

/**
 * Registers the fact ledger's MCP tools (docs/FACTS.md): `facts_schema`, `facts_record`, `facts_update`,
 * `facts_delete`, `facts_declare`, `facts_query`, and for dependent facts `facts_state`, `facts_state_set`,
 * `facts_state_resolve`. Scoped like the memory tools (the `project` argument, else the
 * agent's working directory's project) and to the server's user.
 */
export function registerFactTools(
  server: McpServer,
  engine: MnemoEngine,
  scope: { writeRef: (project: string | undefined) => Promise<ProjectRef>; projectArg: z.ZodType },
): void {
  const handler =
    <S extends z.ZodObject>(schema: S, fn: (input: z.output<S>, project: ProjectRef) => Promise<Record<string, unknown>>) =>
    async (args: unknown): Promise<CallToolResult> => {
      try {
        const input = parseInput(schema, args)
        return okResult(await fn(input, await scope.writeRef((args as { project?: string } | undefined)?.project)))
      } catch (error) {
        return errorResult(error)
      }
    }
  const project = { project: scope.projectArg }

  server.registerTool(
    'facts_schema',
    {
      title: 'Fact collections',
      description:
        "The project's typed collections (trips, test runs, …): each with its fields and their types, identity key, time field, record count, time range and example values. Read it before writing a facts_query.",
      inputSchema: project,
    },
    handler(z.object({}), async (_input, p) => ({
      collections: (await engine.facts.schema({ project: p })).map((c) => ({
        name: c.name,
        records: c.records,
        ...(c.from !== undefined ? { from: c.from, to: c.to } : {}),
        identity: c.identity,
        ...(c.timeField !== undefined ? { timeField: c.timeField } : {}),
        fields: c.fields.map((f) => ({
          name: f.name,
          type: describeType(f),
          examples: c.examples[f.name] ?? [],
          ...(f.synonyms ? { synonyms: f.synonyms } : {}),
        })),
      })),
      grammar: FACT_QUERY_GRAMMAR,
    })),
  )

  server.registerTool(
    'facts_query',
    {
      title: 'Query facts',
      description: `Answer an exact question (how many, how much, which most, trend) from typed records, never a guess. Returns value, the record ids it rests on and its coverage; an answer over no records says so.\n${FACT_QUERY_GRAMMAR}`,
      inputSchema: { ...factQueryInput.shape, ...project },
    },
    handler(factQueryInput, async (input, p) => {
      const a = await engine.facts.query(input.query, { project: p, explain: input.explain === true })
      return { ...a, query: input.query }
    }),
  )

  server.registerTool(
    'facts_record',
    {
      title: 'Record facts',
      description:
        'Record one or more typed records in a collection (a trip, a measurement, a decision with fields). An unknown collection is created with types inferred from the records; a record with the identity of a stored one updates it. A value of the wrong type is refused, naming the record and field.',
      inputSchema: { ...factRecordInput.shape, ...project },
    },
    handler(factRecordInput, async (input, p) => {
      const r = await engine.facts.add(input.collection, input.records, {
        project: p,
        ...(input.status ? { status: input.status } : {}),
        provenance: { source: 'agent' },
      })
      return { collection: r.collection.name, schemaChanged: r.schemaChanged, records: r.records }
    }),
  )

  server.registerTool(
    'facts_update',
    {
      title: 'Update a fact record',
      description: 'Change fields (or the status) of a record by id; the earlier version stays in its history.',
      inputSchema: { ...factUpdateInput.shape, ...project },
    },
    handler(factUpdateInput, async (input, p) => ({
      record: await engine.facts.update(input.id, input.values, {
        project: p,
        ...(input.status ? { status: input.status } : {}),
        provenance: { source: 'agent' },
      }),
    })),
  )

  server.registerTool(
    'facts_delete',
    {
      title: 'Delete a fact record',
      description:
        'Delete a record for good: its values leave every view, index and export (only the fact that it was deleted, and when, is kept).',
      inputSchema: { ...factDeleteInput.shape, ...project },
    },
    handler(factDeleteInput, async (input, p) => ({ ...(await engine.facts.delete(input.id, { project: p, actor: 'mcp' })) })),
  )

  server.registerTool(
    'facts_declare',
    {
      title: 'Declare a fact collection',
      description:
        'Declare a typed collection (or add fields to one): field types, identity key (fields whose values make a record the same one), time field.',
      inputSchema: { ...factDeclareInput.shape, ...project },
    },
    handler(factDeclareInput, async (input, p) => ({ collection: await engine.facts.declare(input.collection, { project: p }) })),
  )

  server.registerTool(
    'facts_state',
    {
      title: 'Answer a dependent fact and list what depends on it',
      description:
        "The current answer for an entity-attribute fact by key (team_lead), rendered as it should be said, and every fact that depends on it through the dependency rules, each with its status. status 'uncertain' means something it depended on changed: do not state its old value as true; tell the user it is unknown now and why (its text says), ask them or check, then call facts_state_resolve (confirm the old value, or give the new one). 'deleted' means the user asked to forget it: say so, never its value.",
      inputSchema: { ...factStateInput.shape, ...project },
    },
    handler(factStateInput, async (input, p) => ({ ...(await engine.facts.dependencies.dependants(input.key, { project: p })) })),
  )

  server.registerTool(
    'facts_state_set',
    {
      title: 'State a dependent fact',
      description:
        'Record the value of an entity-attribute fact by key (the user said the team lead is now Jihoon: key team_lead). Its dependency rules run now: the changes list says which dependants took a declared value and which became uncertain; tell the user about the uncertain ones.',
      inputSchema: { ...factStateSetInput.shape, ...project },
    },
    handler(factStateSetInput, async (input, p) => ({
      changes: await engine.facts.dependencies.set(input.key, input.value, { project: p }),
    })),
  )

  server.registerTool(
    'facts_state_resolve',
    {
      title: 'Confirm or re-resolve an uncertain fact',
      description:
        "For a fact whose status is 'uncertain' (facts_state, or the context block's 'Facts now uncertain'): once the user or the evidence settles it, confirm the value it had (leave value out) or give the value it has now (its own rules then run). Refused for a fact that is not uncertain. Its dependants stay as they are; resolve each in turn.",
      inputSchema: { ...factResolveInput.shape, ...project },
    },
    handler(factResolveInput, async (input, p) => ({
      changes: await engine.facts.dependencies.resolve(input.key, input.value, { project: p }),
    })),
  )
}
