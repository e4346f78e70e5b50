import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runCliCaptured } from '../../testing/run-cli.js'

let tmp: string
let proj: string
beforeEach(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'mnemo-contradiction-'))
  proj = path.join(tmp, 'proj')
  mkdirSync(path.join(proj, '.git'), { recursive: true })
})
afterEach(() => rmSync(tmp, { recursive: true, force: true }))

const cli = (argv: string[]) => runCliCaptured(argv, { env: { MNEMO_HOME: path.join(tmp, 'home'), HOME: tmp }, cwd: proj })
const json = async (argv: string[]) => JSON.parse((await cli([...argv, '--json'])).stdout)

describe('remember supersedes an older memory a new one contradicts in natural words', () => {
  for (const [older, newer] of [
    [
      'The orders service stores its data in PostgreSQL 14.',
      'The orders database was migrated from PostgreSQL to MySQL 8 this week; PostgreSQL is no longer used.',
    ],
    ['Code style: indent with tabs.', 'Code style changed: indent with 2 spaces, never tabs.'],
    ['we deploy on Fridays', 'we deploy on Thursdays now'],
  ] as const) {
    it(`"${older}" → "${newer}": only the new one stays current, and context injects only it`, async () => {
      const old = (await json(['remember', older])).memory.id as string
      const r = await cli(['remember', newer])
      expect(r.stdout).toMatch(new RegExp(`^remembered mem_\\w+ \\[fact\\] in project proj \\(.+\\), superseding ${old}\\n$`))
      const history = await json(['history', old])
      expect(history.versions.map((v: { text: string; validTo: string | null }) => [v.text, v.validTo === null])).toEqual([
        [older, false],
        [newer, true],
      ])
      const context = (await cli(['context'])).stdout
      expect(context).toContain(newer)
      expect(context).not.toContain(older)
    })
  }

  it('keeps two facts about different subjects both current', async () => {
    const orders = (await json(['remember', 'The orders service stores its data in PostgreSQL 14.'])).memory.id as string
    const billing = (await json(['remember', 'The billing service was migrated from PostgreSQL to MySQL 8.'])).memory
    expect(billing.supersedes).toBeNull()
    const context = (await cli(['context'])).stdout
    expect(context).toContain('PostgreSQL 14')
    expect(context).toContain('billing service')
    expect((await json(['show', orders])).memory).toMatchObject({ validTo: null, supersededBy: null })
  })

  it('--supersedes <id> with the text of another current memory ends the named one instead of being ignored', async () => {
    const a = (await json(['remember', 'the cache is Redis 7'])).memory.id as string
    const b = (await json(['remember', 'sessions are kept in Memcached'])).memory.id as string
    const r = await json(['remember', 'the cache is Redis 7', '--supersedes', b])
    expect(r).toMatchObject({ created: false, memory: { id: a, supersedes: b } })
    const context = (await cli(['context'])).stdout
    expect(context).toContain('the cache is Redis 7')
    expect(context).not.toContain('Memcached')
  })
})
