import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CAN_MAKE_UNWRITABLE, makeUnwritable } from '../testing/unwritable.js'
import { useScratch } from '../testing/scratch.js'
import { openMnemo } from './open-mnemo.js'
import { dataDirError, ensureDataDir, makeDirectory, windowsPathIn } from './data-dir.js'

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
    expect(() => ensureDataDir(file)).toThrow(
      expect.objectContaining({
        code: 'STORE_UNAVAILABLE',
        message: `MNEMO_HOME ${file} is not a directory (it is a file)`,
        hint: 'point MNEMO_HOME (or --home) at a directory, or move that file away',
      }),
    )
    expect(() => ensureDataDir(path.join(file, 'sub'))).toThrow(
      `MNEMO_HOME ${path.join(file, 'sub')} is not a directory (${file} is a file)`,
    )
  })
})

describe('ensureDataDir on data directories that cannot be made', () => {
  // Node's recursive mkdir spins forever on /proc/nope (ENOENT below a folder that exists); the walk must end.
  it.runIf(existsSync('/proc/self'))(
    'names a folder that a file system refuses to create (/proc), in the library too, instead of spinning',
    () => {
      expect(() => ensureDataDir('/proc/nope')).toThrow(
        expect.objectContaining({
          code: 'STORE_UNAVAILABLE',
          message:
            'MNEMO_HOME /proc/nope cannot be created: mkdir /proc/nope failed with ENOENT though /proc exists (a file system that takes no new folders, like /proc)',
        }),
      )
      expect(() => openMnemo({ env: { MNEMO_HOME: '/proc/nope/deeper', HOME: scratch() } })).toThrow(
        'MNEMO_HOME /proc/nope/deeper cannot be created: mkdir /proc/nope failed with ENOENT',
      )
    },
  )

  it('names a symbolic link to nothing and its target, instead of a bare ENOENT', () => {
    const dir = scratch()
    const link = path.join(dir, 'home-link')
    symlinkSync(path.join(dir, 'gone'), link)
    expect(() => ensureDataDir(link)).toThrow(
      expect.objectContaining({
        code: 'STORE_UNAVAILABLE',
        message: `MNEMO_HOME ${link} cannot be created: ${link} is a symbolic link to ${path.join(dir, 'gone')}, which does not exist`,
      }),
    )
    expect(() => ensureDataDir(path.join(link, 'sub'))).toThrow(
      `${link} is a symbolic link to ${path.join(dir, 'gone')}, which does not exist`,
    )
  })

  it('refuses a Windows path on a system that would make it one literal folder under the cwd, and creates nothing', () => {
    const cwd = scratch()
    for (const given of ['\\\\?\\C:\\Users\\Jane Doe\\.mnemo', 'C:\\Users\\Jane Doe\\.mnemo', '\\\\server\\share\\mnemo']) {
      const resolved = path.resolve(cwd, given)
      expect(() => ensureDataDir(resolved)).toThrow(
        expect.objectContaining({
          code: 'STORE_UNAVAILABLE',
          message: `MNEMO_HOME ${resolved} holds a Windows path (${given}), which this system would create as one literal folder`,
        }),
      )
    }
    expect(readdirSync(cwd)).toEqual([])
    expect(windowsPathIn('C:\\Users\\me', 'win32')).toBeUndefined()
    expect(windowsPathIn('/home/me/a:b/.mnemo', 'linux')).toBeUndefined()
  })

  it('makeDirectory creates every missing level once and accepts one that exists', () => {
    const dir = path.join(scratch(), 'a', 'b', 'c')
    makeDirectory(dir)
    makeDirectory(dir)
    expect(existsSync(dir)).toBe(true)
  })
})

describe('dataDirError', () => {
  it.runIf(CAN_MAKE_UNWRITABLE)('names a data directory this user cannot write, and then a database file it cannot write', () => {
    const home = scratch()
    writeFileSync(path.join(home, 'mnemo.db'), '')
    mkdirSync(path.join(home, 'logs'))
    const restore = makeUnwritable(home)!
    cleanups.push(restore)
    expect(dataDirError(home, undefined, path.join(home, 'mnemo.db'))).toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: `MNEMO_HOME ${home} is not writable (permission denied)`,
      hint: expect.stringContaining('let this user write it'),
    })
  })

  it('finds nothing wrong with a writable directory, so the caller’s own error stands', () => {
    const home = scratch()
    expect(dataDirError(home, new Error('disk I/O error'), path.join(home, 'mnemo.db'))).toBeUndefined()
  })
})
