import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CAN_MAKE_UNWRITABLE, makeUnwritable } from '../testing/unwritable.js'
import { useScratch } from '../testing/scratch.js'
import { dataDirError, ensureDataDir } from './data-dir.js'

const { scratch, cleanups } = useScratch()

describe('ensureDataDir', () => {
  it('creates a missing data directory and its parents', () => {
    const home = path.join(scratch(), 'a', 'b')
    ensureDataDir(home)
    expect(dataDirError(home)).toBeUndefined()
  })

  it('names a file given as the data directory, or a file above it, instead of EEXIST or ENOTDIR', () => {
    const dir = scratch()
    const file = path.join(dir, 'not-a-dir')
    writeFileSync(file, 'x')
    expect(() => ensureDataDir(file)).toThrow(expect.objectContaining({ code: 'STORE_UNAVAILABLE', message: `MNEMO_HOME ${file} is not a directory (it is a file)`, hint: 'point MNEMO_HOME (or --home) at a directory, or move that file away' }))
    expect(() => ensureDataDir(path.join(file, 'sub'))).toThrow(`MNEMO_HOME ${path.join(file, 'sub')} is not a directory (${file} is a file)`)
  })
})

describe('dataDirError', () => {
  it.runIf(CAN_MAKE_UNWRITABLE)('names a data directory this user cannot write, and then a database file it cannot write', () => {
    const home = scratch()
    writeFileSync(path.join(home, 'mnemo.db'), '')
    mkdirSync(path.join(home, 'logs'))
    const restore = makeUnwritable(home)!
    cleanups.push(restore)
    expect(dataDirError(home, undefined, path.join(home, 'mnemo.db'))).toMatchObject({ code: 'STORE_UNAVAILABLE', message: `MNEMO_HOME ${home} is not writable (permission denied)`, hint: expect.stringContaining('let this user write it') })
  })

  it('finds nothing wrong with a writable directory, so the caller’s own error stands', () => {
    const home = scratch()
    expect(dataDirError(home, new Error('disk I/O error'), path.join(home, 'mnemo.db'))).toBeUndefined()
  })
})
