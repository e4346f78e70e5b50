import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { contextInput, hookEventInput, parseInput, recallInput, rememberInput, sessionsInput } from './schemas.js'
import { requireProject } from './project-arg.js'
import { CHANNEL_NAMES } from './types.js'

function errorOf(fn: () => unknown): { code: string; message: string; details: unknown; hint: string | undefined } {
  try {
    fn()
  } catch (error) {
    return error as never
  }
  throw new Error('expected a throw')
}

describe('shared input schemas', () => {
  it('take exactly the channels retrieval knows (CHANNEL_NAMES) as recall channels', () => {
    expect(parseInput(recallInput, { query: 'x', channels: [...CHANNEL_NAMES] }).channels).toEqual([...CHANNEL_NAMES])
    expect(errorOf(() => parseInput(recallInput, { query: 'x', channels: ['bm25', 'lsa'] })).code).toBe('INVALID_INPUT')
  })

  it('report the first bad key as `<path> <problem> (got <value>)` with details.path', () => {
    const cases: [z.ZodType, unknown, string, string][] = [
      [recallInput, { query: 'x', limit: 0 }, 'limit', 'limit must be an integer 1–100 (got 0)'],
      [recallInput, { query: 'x', limit: 2.5 }, 'limit', 'limit must be an integer 1–100 (got 2.5)'],
      [recallInput, { query: ' \n ' }, 'query', 'query must not be blank (got " \\n ")'],
      [recallInput, { query: 'q'.repeat(16_001) }, 'query', 'query must be 1–16000 characters (got 16001 characters)'],
      [recallInput, {}, 'query', 'query is required (got nothing)'],
      [recallInput, { query: 'x', channels: [] }, 'channels', 'channels must list at least 1 item (got [])'],
      [
        recallInput,
        { query: 'x', channels: ['bm25', 'nope'] },
        'channels.1',
        'channels.1 must be one of bm25, vector, embedding, graph, time (got "nope")',
      ],
      [recallInput, 'x', 'input', 'input must be an object (got "x")'],
      [rememberInput, { text: 'x', kind: 'rumour' }, 'kind', 'kind must be one of decision, fact, preference, lesson (got "rumour")'],
      [rememberInput, { text: 'x', project: '' }, 'project', 'project must be 1–4096 characters (got "")'],
      [sessionsInput, { limit: 201 }, 'limit', 'limit must be an integer 1–200 (got 201)'],
      [contextInput, { budget: 199 }, 'budget', 'budget must be an integer 200–100000 (got 199)'],
      [hookEventInput, { event: 'Stop', payload: null }, 'payload', 'payload must be an object (got null)'],
    ]
    for (const [schema, input, path, message] of cases) {
      expect(
        errorOf(() => parseInput(schema, input)),
        message,
      ).toMatchObject({ code: 'INVALID_INPUT', message, details: { path } })
    }
  })

  it('keep the limits out of `.shape`, so that MCP only rejects malformed calls and the handler reports the rest', () => {
    const shapeOnly = z.object(recallInput.shape)
    expect(shapeOnly.safeParse({ query: '', limit: 0 }).success).toBe(true)
    expect(shapeOnly.safeParse({ query: 'x', limit: 'ten' }).success).toBe(false)
    // …while advertising them in the JSON Schema.
    expect(z.toJSONSchema(shapeOnly).properties?.['limit']).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 })
  })

  it('pass good input through, dropping unknown keys', () => {
    expect(parseInput(recallInput, { query: 'validateToken', limit: 5, extra: true })).toEqual({ query: 'validateToken', limit: 5 })
  })
})

describe('requireProject', () => {
  const known = () => ['webshop', 'billing']
  it('refuses a missing project, listing the known ones', () => {
    expect(errorOf(() => requireProject(undefined, known, 'pass `project`'))).toMatchObject({
      code: 'INVALID_INPUT',
      message: 'project is required (got nothing)',
      hint: 'pass `project`: a project name or an absolute path inside it; known projects: webshop, billing',
      details: { path: 'project' },
    })
  })

  it('refuses a relative path and accepts a name or an absolute path', () => {
    expect(errorOf(() => requireProject('../webshop', known)).message).toBe(
      'project must be a project name or an absolute path (got "../webshop")',
    )
    expect(errorOf(() => requireProject('.', known)).message).toBe('project must be a project name or an absolute path (got ".")')
    expect(requireProject('webshop', known)).toBe('webshop')
    expect(requireProject('/srv/webshop/src', known)).toBe('/srv/webshop/src')
  })
})
