import type { HookAgent } from './types.js'

// The agent hook events mnemo captures: what `mnemo connect` registers in each agent's configuration and what capture
// maps each agent's own event names to (capture/claude-hook.ts).

/** Claude Code hook events mnemo registers for and understands. */
export const CLAUDE_HOOK_EVENTS = [
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
] as const
export type ClaudeHookEvent = (typeof CLAUDE_HOOK_EVENTS)[number]

/** A hook event of an agent and the mnemo capture event (Claude Code vocabulary) its command passes to `mnemo hook`. */
export interface HookEventMapping {
  agentEvent: string
  mnemoEvent: ClaudeHookEvent
}

/** Codex CLI hook events mnemo registers (Codex uses Claude Code's names). */
export const CODEX_HOOK_EVENTS: readonly HookEventMapping[] = [
  { agentEvent: 'SessionStart', mnemoEvent: 'SessionStart' },
  { agentEvent: 'UserPromptSubmit', mnemoEvent: 'UserPromptSubmit' },
  { agentEvent: 'PostToolUse', mnemoEvent: 'PostToolUse' },
  { agentEvent: 'SubagentStop', mnemoEvent: 'SubagentStop' },
  { agentEvent: 'Stop', mnemoEvent: 'Stop' },
]

/** Cursor hook events mnemo registers, in write order. */
export const CURSOR_HOOK_EVENTS: readonly HookEventMapping[] = [
  { agentEvent: 'sessionStart', mnemoEvent: 'SessionStart' },
  { agentEvent: 'beforeSubmitPrompt', mnemoEvent: 'UserPromptSubmit' },
  { agentEvent: 'postToolUse', mnemoEvent: 'PostToolUse' },
  { agentEvent: 'postToolUseFailure', mnemoEvent: 'PostToolUseFailure' },
  { agentEvent: 'subagentStop', mnemoEvent: 'SubagentStop' },
  { agentEvent: 'afterAgentResponse', mnemoEvent: 'Stop' },
  { agentEvent: 'sessionEnd', mnemoEvent: 'SessionEnd' },
]

/** Gemini CLI hook events mnemo registers. */
export const GEMINI_HOOK_EVENTS: readonly HookEventMapping[] = [
  { agentEvent: 'SessionStart', mnemoEvent: 'SessionStart' },
  { agentEvent: 'BeforeAgent', mnemoEvent: 'UserPromptSubmit' },
  { agentEvent: 'AfterTool', mnemoEvent: 'PostToolUse' },
  { agentEvent: 'AfterAgent', mnemoEvent: 'Stop' },
  { agentEvent: 'SessionEnd', mnemoEvent: 'SessionEnd' },
]

const BY_AGENT: Readonly<Record<HookAgent, readonly HookEventMapping[]>> = {
  'claude-code': [],
  codex: CODEX_HOOK_EVENTS,
  cursor: CURSOR_HOOK_EVENTS,
  gemini: GEMINI_HOOK_EVENTS,
  // mnemo's OpenCode plugin passes Claude Code event names (src/adapters/cli/connect/opencode-plugin.ts).
  opencode: [],
}

/**
 * The mnemo event for an event name as given on the command line: an agent's
 * own name (`beforeSubmitPrompt --agent cursor`, `AfterTool --agent gemini`)
 * becomes the Claude Code name connect registers for it; anything else is
 * returned as is.
 */
export function toMnemoEvent(agent: HookAgent, eventName: string): string {
  return BY_AGENT[agent].find((m) => m.agentEvent === eventName)?.mnemoEvent ?? eventName
}

/** The agent's own hook event names mnemo maps (empty for Claude Code, whose names are mnemo's). */
export function agentHookEventNames(agent: HookAgent): string[] {
  return BY_AGENT[agent].map((m) => m.agentEvent)
}
