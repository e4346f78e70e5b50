import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { tempDir } from '../testing/test-mnemo.js'
import { compileCommonJs, runCommonJs } from './code-cache.js'

const cleanups: (() => void)[] = []
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()!()
})

function file(name: string, source: string): string {
  const t = tempDir()
  cleanups.push(t.cleanup)
  const f = path.join(t.dir, name)
  writeFileSync(f, source)
  return f
}

describe('runCommonJs', () => {
  it('runs a CommonJS file as Node would (exports, module.exports, require, __filename, __dirname)', () => {
    const f = file(
      'm.cjs',
      "const p = require('node:path'); exports.base = p.basename(__filename); module.exports.dir = __dirname; exports.twice = (n) => n * 2",
    )
    const m = runCommonJs(f, undefined, createRequire(f)) as { base: string; dir: string; twice: (n: number) => number }
    expect(m).toEqual({ base: 'm.cjs', dir: path.dirname(f), twice: m.twice })
    expect(m.twice(21)).toBe(42)
  })

  it('takes the cache it made after a run, and compiles the source when a cache does not fit it', () => {
    const f = file('m.cjs', 'exports.sum = (xs) => xs.reduce((a, b) => a + b, 0)')
    const first = compileCommonJs(f, undefined, createRequire(f))
    expect((first.exports as { sum: (xs: number[]) => number }).sum([1, 2, 3])).toBe(6)
    const cache = first.script.createCachedData()
    const again = compileCommonJs(f, cache, createRequire(f))
    expect(again.script.cachedDataRejected).toBe(false)
    expect((again.exports as { sum: (xs: number[]) => number }).sum([4, 5])).toBe(9)
    // A cache of other source (another build): V8 refuses it and the file still runs as written.
    const other = file('o.cjs', 'exports.sum = () => -1; exports.more = "a longer source than the first"')
    const wrong = compileCommonJs(other, cache, createRequire(other))
    expect(wrong.script.cachedDataRejected).toBe(true)
    expect((wrong.exports as { sum: () => number }).sum()).toBe(-1)
  })
})
