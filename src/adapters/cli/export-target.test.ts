import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openMnemo } from '../../runtime/open-mnemo.js'
import { runCliCaptured } from '../../testing/run-cli.js'

let tmp: string
let home: string
let proj: string

beforeEach(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'mnemo-export-out-'))
  home = path.join(tmp, 'home')
  proj = path.join(tmp, 'proj')
  mkdirSync(path.join(proj, '.git'), { recursive: true })
})
afterEach(() => rmSync(tmp, { recursive: true, force: true }))

const cli = (argv: string[]) => runCliCaptured(argv, { env: { MNEMO_HOME: home, HOME: tmp }, cwd: proj })

/** The store still opens and holds the memory remembered before the refused export. */
async function storeIntact(): Promise<void> {
  const m = openMnemo({ env: { MNEMO_HOME: home, HOME: tmp } })
  try {
    expect(await m.engine.integrityCheck()).toBe('ok')
    expect((await m.engine.stats()).memories).toBe(1)
  } finally {
    await m.close()
  }
}

describe('export --out never destroys the store nor a file it was not told to replace', () => {
  beforeEach(async () => {
    expect((await cli(['remember', 'the orders service uses PostgreSQL 14'])).code).toBe(0)
  })

  it('refuses the database itself, its -wal file, a link to it and anything in MNEMO_HOME, even with --force', async () => {
    const link = path.join(tmp, 'db-link')
    symlinkSync(path.join(home, 'mnemo.db'), link)
    const hard = path.join(tmp, 'db-hard')
    linkSync(path.join(home, 'mnemo.db'), hard)
    for (const target of [path.join(home, 'mnemo.db'), path.join(home, 'mnemo.db-wal'), link, hard]) {
      const r = await cli(['export', '--out', target, '--force'])
      expect(r).toMatchObject({ code: 2, stdout: '' })
      expect(r.stderr).toContain(`--out ${target} is the store's own database file; exporting there would destroy it`)
    }
    const r = await cli(['export', '--out', path.join(home, 'backup.jsonl')])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`is inside the data directory ${home}`)
    expect(existsSync(path.join(home, 'backup.jsonl'))).toBe(false)
    await storeIntact()
  })

  it('refuses an existing file without --force, and replaces it with --force', async () => {
    const file = path.join(tmp, 'notes.txt')
    writeFileSync(file, 'my notes')
    const r = await cli(['export', '--out', file])
    expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining(`--out ${file} already exists\nhint: add --force to replace it`) })
    expect(readFileSync(file, 'utf8')).toBe('my notes')
    expect((await cli(['export', '--out', file, '--force'])).code).toBe(0)
    expect(readFileSync(file, 'utf8')).toContain('"format":"mnemo-export"')
  })

  it('Markdown: refuses a folder where a file it would write exists (writing none), or the data directory; --force replaces', async () => {
    const dir = path.join(tmp, 'md')
    expect((await cli(['export', '--format', 'markdown', '--out', dir])).code).toBe(0)
    const [name] = readdirSync(dir)
    writeFileSync(path.join(dir, name!), 'edited by hand')
    const r = await cli(['export', '--format', 'markdown', '--out', dir])
    expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining(`--out ${path.join(dir, name!)} already exists`) })
    expect(readFileSync(path.join(dir, name!), 'utf8')).toBe('edited by hand')
    expect((await cli(['export', '--format', 'markdown', '--out', dir, '--force'])).code).toBe(0)
    expect(readFileSync(path.join(dir, name!), 'utf8')).toContain('PostgreSQL 14')
    const inHome = await cli(['export', '--format', 'markdown', '--out', home, '--force'])
    expect(inHome).toMatchObject({ code: 2, stderr: expect.stringContaining(`--out ${home} is inside the data directory`) })
    await storeIntact()
  })
})
