import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

// Runs the library example exactly as a user would (it imports 'mnemo' by package name).
const ROOT = path.resolve(import.meta.dirname, '..')

describe('examples/library.mjs', () => {
  it('runs and prints the current fact, its history and a context block', () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'examples/library.mjs')], { cwd: ROOT, encoding: 'utf8' })
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout).toContain('fact    orders DB migrated to MySQL 8')
    expect(r.stdout).toContain('orders DB is PostgreSQL 14 (superseded)\norders DB migrated to MySQL 8 (current)')
    expect(r.stdout).toContain('<mnemo-context project="acme-api"')
  })
})
