import { describe, expect, it } from 'vitest'
import { captureClaudeHook, chooseHookEvent } from './claude-hook.js'

describe('chooseHookEvent', () => {
  it('keeps a name mnemo knows as given, even when the payload names another', () => {
    expect(chooseHookEvent('claude-code', 'Stop', 'SubagentStop')).toEqual({ event: 'Stop' })
    expect(chooseHookEvent('claude-code', 'Notification', undefined)).toEqual({ event: 'Notification' })
    // connect registers Claude Code's names for Cursor; Cursor's payload carries its own.
    expect(chooseHookEvent('cursor', 'UserPromptSubmit', 'beforeSubmitPrompt')).toEqual({ event: 'UserPromptSubmit' })
  })

  it('stores a misspelled name as the payload’s hook_event_name when mnemo knows that one, and says so', () => {
    expect(chooseHookEvent('claude-code', 'PostTooluse', 'PostToolUse')).toEqual({
      event: 'PostToolUse',
      note: 'unknown hook event "PostTooluse" for claude-code: stored as PostToolUse, the payload\'s hook_event_name "PostToolUse" (fix the event name in the hook command)',
    })
    // Each agent's own names, as their payloads carry them (core/hook-events.ts).
    expect(chooseHookEvent('cursor', 'beforeSubmitprompt', 'beforeSubmitPrompt')).toMatchObject({ event: 'UserPromptSubmit' })
    expect(chooseHookEvent('gemini', 'AfterToll', 'AfterTool')).toMatchObject({ event: 'PostToolUse' })
    expect(chooseHookEvent('codex', 'Stpo', 'Stop')).toMatchObject({ event: 'Stop' })
  })

  it('keeps raw, without a note, an event of the agent’s that mnemo does not know when the payload confirms its name', () => {
    expect(chooseHookEvent('claude-code', 'PermissionRequest', 'PermissionRequest')).toEqual({ event: 'PermissionRequest' })
    expect(chooseHookEvent('gemini', 'BeforeTool', 'BeforeTool')).toEqual({ event: 'BeforeTool' })
  })

  it('keeps an unknown name the payload does not confirm as is, with a note naming the nearest known event', () => {
    expect(chooseHookEvent('claude-code', 'PostTooluse', undefined)).toEqual({
      event: 'PostTooluse',
      note: 'unknown hook event "PostTooluse" for claude-code: stored as is, not derived into observations (did you mean PostToolUse?)',
    })
    expect(chooseHookEvent('cursor', 'afterAgentRespons', 'other')).toMatchObject({
      note: expect.stringContaining('(did you mean afterAgentResponse?)'),
    })
    expect(chooseHookEvent('claude-code', 'Deploy', 'Deployed')).toEqual({
      event: 'Deploy',
      note: 'unknown hook event "Deploy" for claude-code: stored as is, not derived into observations',
    })
  })
})

describe('captureClaudeHook', () => {
  it('files a misspelled event under the payload’s name, so its key and type are the real event’s', () => {
    const stdin = JSON.stringify({
      session_id: 't',
      cwd: '/tmp',
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_use_id: 'u1',
      tool_input: { command: 'make deploy-typo' },
      tool_response: { stdout: 'ok' },
    })
    const captured = captureClaudeHook('PostTooluse', stdin, 0, { resolveProject: () => ({ root: '/tmp', name: 'tmp' }) })
    expect(captured).toMatchObject({
      event: { type: 'PostToolUse', idemKey: 'claude-code:t:PostToolUse:u1' },
      note: expect.stringContaining('stored as PostToolUse'),
    })
  })
})
