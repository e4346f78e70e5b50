import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { whyNoPostgres, withPostgres } from '../../testing/postgres.js'
import { runCliCaptured } from '../../testing/run-cli.js'
import { tempDir } from '../../testing/test-mnemo.js'

// `mnemo migrate` and `mnemo serve --database` as a person runs them: copies in and out with the counts printed,
// and the errors for what cannot work (no target, the same database twice, an unknown scheme, a server that is not
// there, a target that holds data), each naming the database with its password masked.
const pg = await withPostgres()
const t = tempDir('mnemo-migrate-')
afterAll(async () => {
  await pg?.drop()
  t.cleanup()
})
const io = (home: string) => ({ env: { MNEMO_HOME: home, HOME: t.dir }, cwd: t.dir })

async function seeded(name: string): Promise<string> {
  const home = path.join(t.dir, name)
  for (const text of ['the orders database is PostgreSQL 14', 'we deploy with blue-green switches', 'refunds round half to even']) {
    const r = await runCliCaptured(['remember', text, '--project', '/p/shop'], io(home))
    expect(r.code, r.stderr).toBe(0)
  }
  return home
}

describe('mnemo migrate', () => {
  it('needs --to or --from (usage error, exit 2)', async () => {
    const r = await runCliCaptured(['migrate'], io(path.join(t.dir, 'none')))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('mnemo migrate needs --to <database> or --from <database>')
  })

  it('refuses an unknown scheme, naming it with the password masked', async () => {
    const r = await runCliCaptured(['migrate', '--to', 'mysql://admin:hunter2@db/mnemo'], io(path.join(t.dir, 'none')))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--to mysql://admin:***@db/mnemo: unknown database scheme mysql://')
    expect(r.stderr).not.toContain('hunter2')
  })

  it('refuses to copy a store onto itself', async () => {
    const home = await seeded('self')
    const r = await runCliCaptured(['migrate', '--to', path.join(home, 'mnemo.db')], io(home))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('the source and the target are the same database')
  })

  it('copies into a new SQLite file and back into an empty data directory, with the counts', async () => {
    const home = await seeded('sqlite-out')
    const file = path.join(t.dir, 'copy.db')
    const out = await runCliCaptured(['migrate', '--to', file, '--json'], io(home))
    expect(out.code, out.stderr).toBe(0)
    expect(JSON.parse(out.stdout)).toMatchObject({ to: file, events: { source: 3, target: 3 }, memories: { source: 3, target: 3 } })
    expect(existsSync(file)).toBe(true)
    // Again into the same file: it holds data now.
    const again = await runCliCaptured(['migrate', '--to', file], io(home))
    expect(again.code).toBe(2)
    expect(again.stderr).toContain(`${file} is not empty (3 events, 3 memories`)
    const fresh = path.join(t.dir, 'sqlite-in')
    const back = await runCliCaptured(['migrate', '--from', file], io(fresh))
    expect(back.code, back.stderr).toBe(0)
    expect(back.stdout).toMatch(/events\s+3 →\s+3/)
    const recall = await runCliCaptured(['recall', 'blue-green', '--project', '/p/shop', '--json'], io(fresh))
    expect(JSON.parse(recall.stdout).hits[0].snippet).toContain('blue-green')
  })

  it.skipIf(!pg)(`copies into PostgreSQL and out again${pg ? '' : ` (skipped: ${whyNoPostgres()})`}`, async () => {
    const home = await seeded('pg-out')
    const out = await runCliCaptured(['migrate', '--to', pg!.url], io(home))
    expect(out.code, out.stderr).toBe(0)
    expect(out.stdout).toMatch(/memories\s+3 →\s+3/)
    const fresh = path.join(t.dir, 'pg-in')
    const back = await runCliCaptured(['migrate', '--from', pg!.url, '--json'], io(fresh))
    expect(back.code, back.stderr).toBe(0)
    expect(JSON.parse(back.stdout)).toMatchObject({ events: { source: 3, target: 3 } })
  })
})

describe('mnemo serve --database', () => {
  it('refuses an unknown scheme before it listens', async () => {
    const r = await runCliCaptured(['serve', '--port', '0', '--database', 'sqlite://x:secret@h/db'], io(path.join(t.dir, 'serve')))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--database sqlite://x:***@h/db: unknown database scheme sqlite://')
  })

  it('names MNEMO_DATABASE_URL when the scheme it holds is unknown', async () => {
    const home = path.join(t.dir, 'serve-env')
    const r = await runCliCaptured(['serve', '--port', '0'], {
      ...io(home),
      env: { ...io(home).env, MNEMO_DATABASE_URL: 'mongodb://db/x' },
    })
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain('MNEMO_DATABASE_URL mongodb://db/x: unknown database scheme mongodb://')
  })

  it('fails naming the URL, password masked, when no server answers there', async () => {
    const r = await runCliCaptured(
      ['serve', '--port', '0', '--database', 'postgres://mnemo:s3cret@127.0.0.1:1/team'],
      io(path.join(t.dir, 'serve-down')),
    )
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('postgres://mnemo:***@127.0.0.1:1/team')
    expect(r.stderr).not.toContain('s3cret')
  })
})
