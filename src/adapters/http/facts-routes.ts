import { z } from 'zod'
import { integer, inputObject, projectField } from '../../core/schemas.js'
import {
  factDeclareInput,
  factQueryInput,
  factRecordInput,
  factResolveInput,
  factStateSetInput,
  factUpdateInput,
} from '../../core/facts/fact-inputs.js'
import type { ProjectRef } from '../../core/types.js'
import type { MnemoEngine } from '../../engine/mnemo.js'
import { defineRoute, needProject, ok, type AnyRestRoute } from './route-kit.js'

// REST routes of the fact ledger (docs/FACTS.md), under /v1/facts: schema, query, record, update, show, delete, declare.

const project = { project: projectField.optional().describe('Project name or absolute path inside it (required).') }
const projectQuery = inputObject(project)

const answerJson = z.object({
  collection: z.string(),
  kind: z.enum(['count', 'number', 'value', 'values', 'groups', 'rows', 'comparison']),
  value: z
    .unknown()
    .describe(
      'A number, a text, a list of values or groups, rows, or increase / decrease / same / unknown; null when nothing matched an average or extreme.',
    ),
  groups: z
    .array(
      z.object({
        key: z.union([z.string(), z.number()]),
        value: z.union([z.number(), z.string(), z.null()]),
        count: z.number(),
        share: z.number().optional(),
      }),
    )
    .optional(),
  comparison: z.record(z.string(), z.unknown()).optional(),
  records: z.array(z.string()).describe('Ids of the records the answer rests on (at most 1000).'),
  coverage: z.object({
    matched: z.number(),
    from: z.string().optional(),
    to: z.string().optional(),
    sources: z.array(z.string()),
    statuses: z.string(),
    collection: z.object({ records: z.number(), from: z.string().optional(), to: z.string().optional() }),
  }),
  empty: z.boolean(),
  text: z.string(),
  sql: z.array(z.object({ sql: z.string(), params: z.array(z.unknown()) })).optional(),
  query: z.unknown(),
})
const recordJson = z.object({
  id: z.string(),
  collection: z.string(),
  values: z.record(z.string(), z.unknown()),
  status: z.string(),
  validFrom: z.number().optional(),
  validTo: z.number().optional(),
  retractedAt: z.number().optional(),
  recordedAt: z.number(),
  version: z.number(),
  provenance: z.record(z.string(), z.unknown()),
  identity: z.string().optional().describe("The identity key's values (JSON), when the collection has an identity."),
  user: z.string().optional(),
})
const specJson = z.object({
  name: z.string(),
  description: z.string().optional(),
  fields: z.array(z.record(z.string(), z.unknown())),
  identity: z.array(z.string()),
  timeField: z.string().optional(),
})

const stateAnswerJson = z.object({
  key: z.string(),
  status: z.enum(['current', 'changed', 'uncertain', 'deleted', 'unknown']),
  value: z.string().nullable(),
  history: z.array(z.string()),
  text: z.string(),
  record: z.string().optional(),
})
const stateChangesJson = z.object({
  changes: z
    .array(
      z.object({
        key: z.string(),
        before: z.string().nullable(),
        after: z.string().nullable(),
        certainty: z.enum(['known', 'uncertain']),
        because: z.string().optional(),
      }),
    )
    .describe('What the write changed, the stated or resolved key first, then what its rules derived, breadth first.'),
})

async function refOf(engine: MnemoEngine, arg: string | undefined, where: 'body' | 'query'): Promise<ProjectRef> {
  return await engine.projectForWrite(await needProject(engine, arg, where))
}

/** Query of GET /v1/facts/collections/:name/records (the viewer's Collections screen). */
const listQuery = inputObject({
  ...project,
  state: z
    .enum(['current', 'retracted', 'superseded', 'deleted'])
    .optional()
    .describe(
      'current (default): live records; retracted: records that stopped holding; superseded: earlier versions of records; deleted: records deleted at your request (id and when only).',
    ),
  sort: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe('A field of the collection (not a list or a boolean) to sort by. Default: record time.'),
  order: z.enum(['asc', 'desc']).optional().describe('asc (default) or desc.'),
  offset: integer(0, 10_000_000).optional().describe('Records to skip. Default 0.'),
  limit: integer(1, 1000).optional().describe('Most records, 1–1000. Default 50.'),
})

/** The fact routes, mounted beside the core routes. */
export const FACT_ROUTES: readonly AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/v1/facts/schema',
    operationId: 'factsSchema',
    summary: "A project's fact collections: fields, types, identity, time field, counts, example values",
    query: projectQuery,
    projectRequired: true,
    responses: {
      200: {
        description: 'The collections, by name.',
        schema: z.object({
          collections: z.array(
            specJson.extend({
              records: z.number(),
              from: z.string().optional(),
              to: z.string().optional(),
              examples: z.record(z.string(), z.array(z.unknown())),
            }),
          ),
        }),
      },
    },
    errors: [400, 404],
    handle: async ({ query }, { engine }) =>
      ok({ collections: await engine.facts.schema({ project: await refOf(engine, query.project, 'query') }) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/facts/query',
    operationId: 'factsQuery',
    summary: 'Answer a query in the fact query language exactly: value, contributing records, coverage',
    body: inputObject({ ...factQueryInput.shape, ...project }),
    projectRequired: true,
    responses: { 200: { description: 'The answer; `empty` when no record matched.', schema: answerJson } },
    errors: [400, 404, 413],
    handle: async ({ body }, { engine }) =>
      ok(await engine.facts.query(body.query, { project: await refOf(engine, body.project, 'body'), explain: body.explain === true })),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/facts/records',
    operationId: 'factsRecord',
    summary: 'Record one or more typed records (an unknown collection is inferred from them)',
    body: inputObject({ ...factRecordInput.shape, ...project }),
    projectRequired: true,
    responses: {
      201: {
        description: 'What happened to each record, in order.',
        schema: z.object({
          collection: specJson,
          schemaChanged: z.boolean(),
          records: z.array(z.object({ id: z.string(), outcome: z.enum(['created', 'updated', 'unchanged']) })),
        }),
      },
    },
    errors: [400, 404, 413],
    handle: async ({ body }, { engine, user }) =>
      ok(
        await engine.facts.add(body.collection, body.records, {
          project: await refOf(engine, body.project, 'body'),
          ...(body.status ? { status: body.status } : {}),
          provenance: { source: user === undefined ? 'agent' : 'user' },
        }),
        201,
      ),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/facts/collections/:name/records',
    operationId: 'factsList',
    summary: "A page of a collection's records by state (current, retracted, superseded versions, deleted), sorted by a field",
    description:
      'An activity collection (sessions, tool_calls, …) has current records only, each with its observation as provenance. Deleted records are listed latest first, with only their id and when.',
    query: listQuery,
    projectRequired: true,
    responses: {
      200: {
        description: 'The page and how many records the collection holds in that state.',
        schema: z.object({
          collection: z.string(),
          state: z.enum(['current', 'retracted', 'superseded', 'deleted']),
          records: z.array(recordJson.extend({ supersededAt: z.number().optional() })),
          deleted: z.array(z.object({ id: z.string(), deletedAt: z.number(), text: z.string() })),
          total: z.number(),
          offset: z.number(),
        }),
      },
    },
    errors: [400, 404],
    handle: async ({ query, params }, { engine }) => {
      const name = params['name'] ?? ''
      const state = query.state ?? 'current'
      const offset = query.offset ?? 0
      const page = await engine.facts.list(name, {
        project: await refOf(engine, query.project, 'query'),
        state,
        offset,
        ...(query.sort !== undefined ? { sort: query.sort } : {}),
        ...(query.order !== undefined ? { order: query.order } : {}),
        ...(query.limit !== undefined ? { limit: query.limit } : {}),
      })
      return ok({
        collection: name,
        state,
        records: page.records,
        deleted: page.deleted,
        total: page.total,
        offset,
      })
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/facts/records/:id',
    operationId: 'factsShow',
    summary: 'A record with its history, or when it was deleted',
    query: projectQuery,
    projectRequired: true,
    responses: {
      200: {
        description: 'The record and its versions, oldest first; or `deleted`.',
        schema: z.union([
          z.object({
            record: recordJson,
            history: z.array(recordJson.extend({ action: z.string(), supersededAt: z.number().optional() })),
          }),
          z.object({ deleted: z.object({ id: z.string(), collection: z.string(), deletedAt: z.number(), text: z.string() }) }),
        ]),
      },
    },
    errors: [400, 404],
    handle: async ({ query, params }, { engine }) =>
      ok(await engine.facts.show(params['id'] ?? '', { project: await refOf(engine, query.project, 'query') })),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/v1/facts/records/:id',
    operationId: 'factsUpdate',
    summary: 'Change fields or the status of a record (a new version)',
    body: inputObject({ values: factUpdateInput.shape.values, status: factUpdateInput.shape.status, ...project }),
    projectRequired: true,
    responses: { 200: { description: 'The record as it is now.', schema: recordJson } },
    errors: [400, 404, 413],
    handle: async ({ body, params }, { engine }) =>
      ok(
        await engine.facts.update(params['id'] ?? '', body.values, {
          project: await refOf(engine, body.project, 'body'),
          ...(body.status ? { status: body.status } : {}),
        }),
      ),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/facts/records/:id',
    operationId: 'factsDelete',
    summary: 'Delete a record for good: its values leave every view, index and export',
    query: projectQuery,
    projectRequired: true,
    responses: {
      200: { description: 'What was deleted.', schema: z.object({ id: z.string(), collection: z.string(), events: z.number() }) },
    },
    errors: [400, 404],
    handle: async ({ query, params }, { engine, user }) =>
      ok(await engine.facts.delete(params['id'] ?? '', { project: await refOf(engine, query.project, 'query'), actor: user ?? 'rest' })),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/facts/collections',
    operationId: 'factsDeclare',
    summary: 'Declare a typed collection, or add fields to one',
    body: inputObject({ ...factDeclareInput.shape, ...project }),
    projectRequired: true,
    responses: { 200: { description: 'The collection as it is now.', schema: specJson } },
    errors: [400, 404, 413],
    handle: async ({ body }, { engine }) =>
      ok(await engine.facts.declare(body.collection, { project: await refOf(engine, body.project, 'body') })),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/facts/state/:key',
    operationId: 'factsState',
    summary: "A dependent fact's answer, and the facts that depend on it with their status (uncertain ones wait to be resolved)",
    query: projectQuery,
    projectRequired: true,
    responses: {
      200: {
        description: 'The answer for the key, and its dependants breadth first through the rules.',
        schema: z.object({
          answer: stateAnswerJson,
          dependants: z.array(
            stateAnswerJson
              .pick({ key: true, status: true, value: true, text: true })
              .extend({ via: z.string(), effect: z.enum(['set', 'uncertain']) }),
          ),
        }),
      },
    },
    errors: [400, 404],
    handle: async ({ query, params }, { engine }) =>
      ok(await engine.facts.dependencies.dependants(params['key'] ?? '', { project: await refOf(engine, query.project, 'query') })),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/facts/state/:key',
    operationId: 'factsStateSet',
    summary: "State a dependent fact's value; its dependency rules run (dependants take a declared value or become uncertain)",
    body: inputObject({ value: factStateSetInput.shape.value, ...project }),
    projectRequired: true,
    responses: { 200: { description: 'The changes made.', schema: stateChangesJson } },
    errors: [400, 404, 413],
    handle: async ({ body, params }, { engine }) =>
      ok({
        changes: await engine.facts.dependencies.set(params['key'] ?? '', body.value, {
          project: await refOf(engine, body.project, 'body'),
        }),
      }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/facts/state/:key/resolve',
    operationId: 'factsStateResolve',
    summary: 'Confirm an uncertain fact (no value) or re-resolve it to a new value (its rules run); refused when it is not uncertain',
    body: inputObject({ value: factResolveInput.shape.value, ...project }),
    projectRequired: true,
    responses: { 200: { description: 'The changes made.', schema: stateChangesJson } },
    errors: [400, 404, 413],
    handle: async ({ body, params }, { engine }) =>
      ok({
        changes: await engine.facts.dependencies.resolve(params['key'] ?? '', body.value, {
          project: await refOf(engine, body.project, 'body'),
        }),
      }),
  }),
]
