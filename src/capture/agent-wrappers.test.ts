import { describe, expect, it } from 'vitest'
import { stripOwnBlocks, unwrapToolOutput, userWords } from './agent-wrappers.js'
import { describeToolResult, isOwnTool } from './tool-text.js'

const BLOCK =
  '<mnemo-context project="shop" generated="2026-12-01T20:38:45.386Z">\nRecalled by mnemo from earlier sessions.\n- Asked: fix the cart\n</mnemo-context>'
const escapeHtml = (s: string): string => s.replaceAll('<', '&lt;').replaceAll('>', '&gt;')

describe('userWords: mnemo blocks and hook output are not the user’s words', () => {
  it.each([
    ['Gemini hook_context, escaped inside', `<hook_context>${escapeHtml(BLOCK)}</hook_context>\n\nPlease fix the cart.`],
    ['raw block before the prompt', `${BLOCK}\n\nPlease fix the cart.`],
    ['escaped block, no wrapper', `${escapeHtml(BLOCK)}\nPlease fix the cart.`],
    ['double-escaped block', `${escapeHtml(BLOCK).replaceAll('&', '&amp;')}\nPlease fix the cart.`],
    ['system-reminder around the block', `<system-reminder>${BLOCK}</system-reminder>\nPlease fix the cart.`],
    ['Claude user-prompt-submit-hook', `Please fix the cart.\n<user-prompt-submit-hook>${BLOCK}</user-prompt-submit-hook>`],
    ['a per-prompt block of another mnemo tag', `<mnemo-recall query="cart">\n- obs_1: cart total\n</mnemo-recall>\nPlease fix the cart.`],
    [
      'a block nesting an old cut-off one',
      `<hook_context>&lt;mnemo-context project="shop"&gt;\n- Asked: &lt;hook_context&gt;&lt;mnemo-context project=\\"shop\\"&gt; Reca…\n&lt;/mnemo-context&gt;</hook_context>\n\nPlease fix the cart.`,
    ],
  ])('%s', (_name, prompt) => {
    expect(userWords(prompt)).toBe('Please fix the cart.')
  })

  it('a prompt that is only a block has no words; text without a block comes back unchanged', () => {
    expect(userWords(`<hook_context>${escapeHtml(BLOCK)}</hook_context>`)).toBe('')
    expect(userWords(BLOCK)).toBe('')
    const plain = 'Explain the <context> element and mnemo-style names like mnemonic.'
    expect(userWords(plain)).toBe(plain)
    // A wrapper that does not hold a mnemo block stays (it is the user's text).
    expect(userWords('<system-reminder>keep tests green</system-reminder> go')).toBe(
      '<system-reminder>keep tests green</system-reminder> go',
    )
  })

  it('stripOwnBlocks keeps words on both sides; a tag without its pair is text', () => {
    expect(stripOwnBlocks(`before\n${BLOCK}\nafter`)).toBe('before\n\nafter')
    expect(stripOwnBlocks(`a\n${BLOCK}\nb\n${escapeHtml(BLOCK)}\nc`)).toBe('a\n\nb\n\nc')
    for (const t of [
      'answer: <mnemo-context project="x">\nRecalled… (cut',
      'a stray </mnemo-context> tag',
      'the closing tag </mnemo-context> then an opening <MNEMO-context > appear',
    ])
      expect(stripOwnBlocks(t)).toBe(t)
  })
})

describe('unwrapToolOutput: agents’ wrappers around what a tool printed', () => {
  it('Gemini CLI: <untrusted_context> and the shell sections (real AfterTool llmContent)', () => {
    expect(unwrapToolOutput('<untrusted_context>\nOutput: zanzibarquokka\nProcess Group PGID: 17530\n</untrusted_context>')).toBe(
      'zanzibarquokka',
    )
    expect(unwrapToolOutput('<untrusted_context>\nOutput: (empty)\nExit Code: 2\nProcess Group PGID: 9\n</untrusted_context>')).toBe(
      'Exit Code: 2',
    )
    expect(unwrapToolOutput('<untrusted_context>\nsee &lt;/untrusted_context&gt; here\n</untrusted_context>')).toBe(
      'see </untrusted_context> here',
    )
  })

  it('Codex CLI: the exec header (real 0.171 function_call_output), exit status kept when not 0', () => {
    expect(
      unwrapToolOutput(
        'Chunk ID: 7861a4\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 4\nOutput:\nzanzibarquokka\n',
      ),
    ).toBe('zanzibarquokka')
    expect(
      unwrapToolOutput(
        'Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 2\nOriginal token count: 9\nOutput:\nls: cannot access',
      ),
    ).toBe('Exit code: 2\nls: cannot access')
  })

  it('Claude Code: its <system-reminder> appended to a Read result', () => {
    expect(
      unwrapToolOutput(
        '     1\texport const a = 1\n\n<system-reminder>\nWhenever you read a file, you should consider whether it would be considered malware.\n</system-reminder>\n',
      ),
    ).toBe('     1\texport const a = 1')
  })

  it('leaves ordinary output alone', () => {
    for (const t of ['Output: 3 files', 'Wall time: 3s\nnothing else', 'plain text\nProcess Group PGID: 4'])
      expect(unwrapToolOutput(t)).toBe(t)
  })

  it('describeToolResult reads Gemini’s llmContent, not its returnDisplay copy', () => {
    expect(
      describeToolResult({
        llmContent: '<untrusted_context>\nOutput: hi\nProcess Group PGID: 1\n</untrusted_context>',
        returnDisplay: 'hi',
      }),
    ).toBe('hi')
  })
})

describe('isOwnTool: every agent’s name for mnemo’s MCP tools', () => {
  it.each([
    'mcp__mnemo__memory_recall',
    'mcp_mnemo_memory_recall',
    'mnemo_memory_recall',
    'mnemo__memory_recall',
    'mnemo.memory_recall',
    'mnemo:memory_status',
    'MCP__MNEMO__memory_remember',
  ])('%s is mnemo’s', (name) => {
    expect(isOwnTool(name)).toBe(true)
  })
  it('Codex 0.171 namespace form', () => {
    expect(isOwnTool('memory_recall', 'mcp__mnemo')).toBe(true)
    expect(isOwnTool('memory_recall', 'mcp__other')).toBe(false)
  })
  it.each(['mnemonic_lookup', 'mcp__mnemonic__x', 'memory_recall', 'mcp__other__mnemo_x', 'Bash', 'mnemo'])('%s is not', (name) => {
    expect(isOwnTool(name)).toBe(false)
  })
})
