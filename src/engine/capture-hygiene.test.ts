import { describe, expect, it } from 'vitest'
import { createTestEngine, hookPayload } from '../testing/test-mnemo.js'

/** A PNG whose pixel data is all zeros: its base64 is "iVBORw0KGgo" then mostly "AAAA…", which no blob heuristic saw. */
const png = (bytes: number): string =>
  Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.alloc(bytes - 16)]).toString('base64')

describe('image data and binary output never reach the log (issue 17 item 2)', () => {
  it('replaces a base64 PNG in a tool result, in the raw event payload and the export, with type and size', async () => {
    const { engine, store } = createTestEngine()
    const block = png(9000) // 12,000 base64 characters
    const inline = png(3000) // 4,000 more in the output text
    expect(block.length).toBe(12_000)
    await engine.captureHook(
      'PostToolUse',
      hookPayload('PostToolUse', {
        tool_name: 'mcp__browser__screenshot',
        tool_use_id: 'shot1',
        tool_input: { url: 'http://localhost:3000' },
        tool_response: {
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: block } },
            { type: 'text', text: `saved ${inline}` },
          ],
        },
      }),
    )
    const exported: string[] = []
    await engine.exportJsonl((l) => exported.push(l))
    const raw = JSON.stringify(await store.readEvents(0, 10))
    for (const where of [raw, exported.join('\n')]) {
      expect(where).not.toContain('iVBORw0KGgo')
      expect(where).not.toMatch(/A{64}/)
      expect(where).toContain('[image: image/png, 9,000 B]')
      expect(where).toContain('saved [image: image/png, 3,000 B]')
    }
    const [obs] = await engine.browseObservations({ projectIds: (await engine.listProjects()).map((p) => p.id), order: 'asc', limit: 5 })
    expect(obs!.text).toBe(
      'mcp__browser__screenshot: http://localhost:3000\n→ [image: image/png, 9,000 B]\nsaved [image: image/png, 3,000 B]',
    )
  })

  it('replaces binary stdout, and removes the control bytes of mostly-text output', async () => {
    const { engine, store } = createTestEngine()
    const binary = Array.from({ length: 600 }, (_, i) => String.fromCharCode(i % 32)).join('')
    await engine.captureHook(
      'PostToolUse',
      hookPayload('PostToolUse', {
        tool_name: 'Bash',
        tool_use_id: 'b1',
        tool_input: { command: 'cat a.out' },
        tool_response: { stdout: binary },
      }),
    )
    await engine.captureHook(
      'PostToolUse',
      hookPayload('PostToolUse', {
        tool_name: 'Bash',
        tool_use_id: 'b2',
        tool_input: { command: 'make' },
        tool_response: { stdout: 'built\x07 ok\x08\x08\x1b[1m done\x1b[0m' },
      }),
    )
    const raw = JSON.stringify(await store.readEvents(0, 10))
    expect(raw).toContain('[binary data: 600 chars]')
    expect(raw).toContain('built ok done')
    expect(raw).not.toMatch(/\\u000[1-8]|\\u001b/)
  })
})

describe('terminal escape sequences (issue 17 item 3)', () => {
  const ATTACK = '\x1b[31mFAIL\x1b[0m cart.test.ts\x1b]0;pwned title\x07\x1b[2J'

  it('are stripped at capture: the log, recall, show and context hold only the words', async () => {
    const { engine, store } = createTestEngine()
    await engine.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: `why does \x1b]0;owned\x07the cart fail` }))
    await engine.captureHook(
      'PostToolUse',
      hookPayload('PostToolUse', {
        tool_name: 'Bash',
        tool_use_id: 't1',
        tool_input: { command: 'npm test' },
        tool_response: { stdout: ATTACK },
      }),
    )
    const hits = await engine.recall('cart')
    const shown = await Promise.all(hits.map(async (h) => JSON.stringify(await engine.show(h.id))))
    const all = [
      JSON.stringify(await store.readEvents(0, 10)),
      JSON.stringify(hits),
      ...shown,
      (await engine.context()).text,
      JSON.stringify(await engine.sessions()),
    ].join('\n')
    expect(all).not.toMatch(/\x1b|\\u001b|\x07|\\u0007/)
    expect(all).toContain('FAIL cart.test.ts')
    expect((await engine.sessions())[0]!.title).toBe('why does the cart fail')
  })

  it('stored before the rule, they are stripped on the way out (recall, show, sessions, context)', async () => {
    const { engine } = createTestEngine()
    // An event appended as an older mnemo stored it: its payload was never stripped.
    await engine.append([
      {
        agent: 'claude-code',
        format: 'claude-hook',
        type: 'UserPromptSubmit',
        sessionKey: 'old',
        project: { root: '/work/demo-app', name: 'demo-app' },
        ts: 1,
        idemKey: 'old:1',
        payload: { session_id: 'old', prompt: `fix the cart ${ATTACK}` },
      },
    ])
    const hits = await engine.recall('cart')
    expect(hits.length).toBeGreaterThan(0)
    const out = [
      JSON.stringify(hits),
      ...(await Promise.all(hits.map(async (h) => JSON.stringify(await engine.show(h.id))))),
      JSON.stringify(await engine.sessions()),
      (await engine.context()).text,
    ].join('\n')
    expect(out).not.toMatch(/\x1b|\\u001b|\x07|\\u0007/)
    expect(out).toContain('fix the cart FAIL cart.test.ts')
  })
})
