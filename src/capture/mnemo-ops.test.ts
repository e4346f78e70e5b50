import { describe, expect, it } from 'vitest'
import type { EventInput } from '../core/types.js'
import { deriveMnemoOp, memoryOpEvent, rememberEvent } from './mnemo-ops.js'

const project = { root: '/p/a', name: 'a' }
const withPayload = (payload: unknown): EventInput => ({ ...rememberEvent(project, 'fact', 'x', 0), payload })

describe('deriveMnemoOp', () => {
  it('derives a memory from a remember event, with its agent and the agent guard', () => {
    const event = rememberEvent(project, 'fact', 'orders DB is PostgreSQL 14', 0, {
      agent: 'codex',
      guardByAgent: true,
      confidence: 0.6,
      sources: ['obs_1'],
    })
    expect(deriveMnemoOp(event).memory).toEqual({
      kind: 'fact',
      text: 'orders DB is PostgreSQL 14',
      agent: 'codex',
      guardByAgent: true,
      confidence: 0.6,
      sources: ['obs_1'],
    })
  })

  it('derives a lifecycle change from a pin/archive event', () => {
    expect(deriveMnemoOp(memoryOpEvent(project, 'archive', 'mem_1', 0, 'alice')).memoryOps).toEqual([{ op: 'archive', id: 'mem_1' }])
  })

  it.each([
    ['a non-string text', { op: 'remember', kind: 'fact', text: 12345 }],
    ['an empty text', { op: 'remember', kind: 'fact', text: '' }],
    ['an unknown kind', { op: 'remember', kind: 'rumour', text: 'x' }],
    ['sources that are not strings', { op: 'remember', kind: 'fact', text: 'x', sources: [1] }],
    ['a confidence above 1', { op: 'remember', kind: 'fact', text: 'x', confidence: 2 }],
    ['an unknown agent', { op: 'remember', kind: 'fact', text: 'x', agent: 'emacs' }],
    ['an unknown guard', { op: 'remember', kind: 'fact', text: 'x', guard: 'user' }],
    ['an op without an id', { op: 'pin' }],
    ['an unknown op', { op: 'delete', id: 'mem_1' }],
    ['an array', []],
    ['null', null],
  ])('derives nothing from %s (an export file is input like any other)', (_name, payload) => {
    expect(deriveMnemoOp(withPayload(payload))).toEqual({ observations: [] })
  })
})
