import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { describe, expect, it } from 'vitest'
import { createMcpServer } from '../adapters/mcp/mcp-server.js'
import { createTestEngine, hookPayload } from '../testing/test-mnemo.js'

const SHOP = { root: '/nonexistent-mnemo-user-wide/shop', name: 'shop' }
const BLOG = { root: '/nonexistent-mnemo-user-wide/blog', name: 'blog' }

/** One store, two users; each project has something of its own so a context block exists. */
async function seeded() {
  const t = createTestEngine({ cwd: SHOP.root })
  const alice = t.engine.scoped({ user: 'alice' })
  const bob = t.engine.scoped({ user: 'bob' })
  for (const p of [SHOP, BLOG])
    for (const who of [alice, bob]) await who.remember(`the ${p.name} project deploys from main`, { project: p })
  return { ...t, alice, bob }
}

describe('user-wide memories', () => {
  it('are recalled and injected in every project of their user, labelled, and never reach another user', async () => {
    const { alice, bob, engine } = await seeded()
    const { memory } = await alice.remember('I prefer pnpm over npm for every install', {
      kind: 'preference',
      scope: 'user',
      project: SHOP,
    })
    expect((await alice.listProjects()).find((p) => p.id === memory.projectId)).toMatchObject({ name: '~alice' })
    for (const p of [SHOP, BLOG]) {
      const [project] = await alice.resolveProjects(p.root)
      const hits = await alice.recall('pnpm install', { projectIds: [project!.id] })
      expect(hits.map((h) => h.id)).toContain(memory.id)
      expect(hits.find((h) => h.id === memory.id)?.project).toBe('~alice')
      expect((await alice.context({ project: p })).text).toContain(
        '- [preference · yours, every project] I prefer pnpm over npm for every install',
      )
      const prompt = await alice.promptContext(
        { project: p, agent: 'claude-code', sessionKey: `a-${p.name}` },
        'which package manager for installs? pnpm or npm?',
      )
      expect(prompt.text).toContain('[preference · yours, every project ·')
      // Bob, in the same projects, never gets it; nor does a reader with no user.
      for (const other of [bob, engine]) {
        const [shared] = await other.resolveProjects(p.root)
        expect((await other.recall('pnpm install', { projectIds: [shared!.id] })).map((h) => h.id)).not.toContain(memory.id)
        expect((await other.context({ project: p })).text).not.toContain('pnpm')
        expect(
          (
            await other.promptContext(
              { project: p, agent: 'claude-code', sessionKey: `o-${p.name}` },
              'which package manager for installs? pnpm or npm?',
            )
          ).text,
        ).not.toContain('pnpm')
      }
    }
    await expect(bob.show(memory.id)).rejects.toThrow(expect.objectContaining({ code: 'NOT_FOUND' }))
  })

  it('move takes a project memory to the user and back to a project, and refuses another user’s', async () => {
    const { alice, bob } = await seeded()
    const local = (await alice.remember('my editor is neovim', { kind: 'preference', project: SHOP })).memory
    await expect(bob.move(local.id, 'user')).rejects.toThrow(expect.objectContaining({ code: 'NOT_FOUND' }))
    const moved = await alice.move(local.id, 'user')
    expect(moved.from).toBe(local.id)
    expect((await alice.context({ project: BLOG })).text).toContain('yours, every project] my editor is neovim')
    await expect(alice.show(local.id)).rejects.toThrow(expect.objectContaining({ code: 'NOT_FOUND' }))
    await expect(alice.move(moved.memory.id, 'user')).rejects.toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }))
    const back = await alice.move(moved.memory.id, BLOG)
    expect((await alice.context({ project: SHOP })).text).not.toContain('neovim')
    expect((await alice.context({ project: BLOG })).text).toContain('- [preference] my editor is neovim')
    expect(back.memory.projectId).not.toBe(moved.memory.projectId)
  })

  it('move takes the whole chain: no superseded version becomes current again, and a pin stays', async () => {
    const { alice } = await seeded()
    const first = (await alice.remember('the orders DB is PostgreSQL 14', { project: SHOP })).memory
    const current = (await alice.remember('orders DB migrated to MySQL 8', { project: SHOP, supersedes: first.id })).memory
    await alice.setMemoryState(current.id, 'pin')
    const moved = await alice.move(current.id, 'user')
    expect(moved.memory).toMatchObject({ text: 'orders DB migrated to MySQL 8', pinned: true })
    // Where it was: neither version is current (on the old code the PostgreSQL 14 fact was current again).
    const [shop] = await alice.resolveProjects(SHOP.root)
    const left = await alice.recall('orders DB PostgreSQL MySQL', { projectIds: [shop!.id] })
    expect(left.map((h) => h.id)).toEqual([moved.memory.id])
    expect((await alice.context({ project: SHOP })).text).not.toContain('PostgreSQL 14')
    await expect(alice.show(first.id)).rejects.toThrow(expect.objectContaining({ code: 'NOT_FOUND' }))
    // In its new place the history is the chain, oldest first, the older version superseded.
    const history = await alice.history(moved.memory.id)
    expect(history.map((m) => [m.text, m.validTo === undefined])).toEqual([
      ['the orders DB is PostgreSQL 14', false],
      ['orders DB migrated to MySQL 8', true],
    ])
  })

  it('MCP memory_remember takes scope user, and memory_recall in another project finds it', async () => {
    const { engine } = createTestEngine({ cwd: SHOP.root })
    const alice = engine.scoped({ user: 'alice' })
    await alice.captureHook('UserPromptSubmit', hookPayload('UserPromptSubmit', { prompt: 'set up the blog' }, 's1', BLOG.root))
    const connect = async (cwd: string) => {
      const server = createMcpServer(alice, cwd)
      const [a, b] = InMemoryTransport.createLinkedPair()
      await server.connect(a)
      const client = new Client({ name: 't', version: '0' })
      await client.connect(b)
      return client
    }
    const inShop = await connect(SHOP.root)
    const stored = (
      await inShop.callTool({
        name: 'memory_remember',
        arguments: { text: 'I write commit messages in the imperative mood', kind: 'preference', scope: 'user' },
      })
    ).structuredContent as { id: string }
    await inShop.close()
    const inBlog = await connect(BLOG.root)
    const found = (await inBlog.callTool({ name: 'memory_recall', arguments: { query: 'commit messages imperative' } }))
      .structuredContent as { hits: { id: string }[] }
    expect(found.hits.map((h) => h.id)).toContain(stored.id)
    await inBlog.close()
  })
})
