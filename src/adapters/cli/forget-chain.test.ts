import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runCliCaptured } from '../../testing/run-cli.js'

let tmp: string
let proj: string
beforeEach(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'mnemo-forget-chain-'))
  proj = path.join(tmp, 'proj')
  mkdirSync(path.join(proj, '.git'), { recursive: true })
})
afterEach(() => rmSync(tmp, { recursive: true, force: true }))

const cli = (argv: string[]) => runCliCaptured(argv, { env: { MNEMO_HOME: path.join(tmp, 'home'), HOME: tmp }, cwd: proj })
const json = async (argv: string[]) => JSON.parse((await cli([...argv, '--json'])).stdout)

describe('forget of the newest version of a memory', () => {
  it('says the previous version is current again and how to forget the chain', async () => {
    const old = (await json(['remember', 'Node version is 18'])).memory.id as string
    const newer = (await json(['remember', 'Node version is 20'])).memory
    expect(newer.supersedes).toBe(old)
    const r = await cli(['forget', newer.id])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(
      `forgot memory ${newer.id}\nthe previous version ${old} is current again: "Node version is 18"\n(forget ${old} too, or run mnemo forget ${newer.id} --chain next time, to remove every version)\n`,
    )
    expect((await json(['recall', 'Node version'])).hits.map((h: { id: string }) => h.id)).toEqual([old])
  })

  it('--chain forgets every version, so none comes back; --json names them', async () => {
    const old = (await json(['remember', 'Node version is 18'])).memory.id as string
    const newer = (await json(['remember', 'Node version is 20'])).memory.id as string
    const r = await json(['forget', newer, '--chain'])
    expect(r.forgotten).toMatchObject({ id: newer, type: 'memory', versions: [old, newer] })
    expect(r.forgotten.restored).toBeUndefined()
    expect((await json(['recall', 'Node version'])).hits).toEqual([])
    expect((await cli(['show', old])).code).toBe(1)
  })

  it('forgetting a memory with no older version restores nothing', async () => {
    const only = (await json(['remember', 'we deploy with blue-green'])).memory.id as string
    const r = await json(['forget', only])
    expect(r.forgotten.restored).toBeUndefined()
  })
})
