import { describe, expect, it } from 'vitest'
import { humanBytes, humanDuration, idType, isWarningFlag, oneLine, roleTool, shortLabel, shortTime, showBidiControls } from './format.js'

describe('format', () => {
  it('humanBytes picks binary units', () => {
    expect(humanBytes(0)).toBe('0 B')
    expect(humanBytes(1023)).toBe('1023 B')
    expect(humanBytes(1536)).toBe('1.5 KiB')
    expect(humanBytes(208896)).toBe('204 KiB')
    expect(humanBytes(5 * 1024 ** 3)).toBe('5.0 GiB')
    expect(humanBytes(-1)).toBe('—')
  })

  it('shortTime shows the clock for today and the date otherwise', () => {
    const now = new Date(2026, 10, 30, 12, 0, 0)
    expect(shortTime(new Date(2026, 10, 30, 9, 5, 7).toISOString(), now)).toBe('09:05:07')
    expect(shortTime(new Date(2026, 10, 29, 23, 59, 0).toISOString(), now)).toBe('2026-11-29 23:59')
    expect(shortTime('not a time', now)).toBe('not a time')
  })

  it('humanDuration reads as words', () => {
    expect(humanDuration(45_000)).toBe('45 s')
    expect(humanDuration(12 * 60_000)).toBe('12 min')
    expect(humanDuration(185 * 60_000)).toBe('3 h 5 min')
    expect(humanDuration(3 * 86_400_000)).toBe('3 d')
  })

  it('oneLine flattens whitespace and cuts with an ellipsis', () => {
    expect(oneLine('a\n\n  b\tc')).toBe('a b c')
    expect(oneLine('abcdef', 4)).toBe('abc…')
  })

  it('shortLabel keeps the end of a long name', () => {
    expect(shortLabel('src/middleware/auth.ts', 10)).toBe('…e/auth.ts')
    expect(shortLabel('api', 10)).toBe('api')
  })

  it('marks injection flags as warnings', () => {
    expect(isWarningFlag('injection:ignore-previous')).toBe(true)
    expect(isWarningFlag('truncated')).toBe(false)
  })

  it('idType reads the prefix; roleTool joins role and tool', () => {
    expect(idType('obs_1')).toBe('observation')
    expect(idType('mem_1')).toBe('memory')
    expect(idType('ses_1')).toBe('session')
    expect(idType('x')).toBeNull()
    expect(roleTool('assistant', 'Bash')).toBe('assistant · Bash')
    expect(roleTool('user', null)).toBe('user')
  })
})

describe('showBidiControls', () => {
  it('makes overrides, embeddings, isolates and marks visible, and leaves other text alone', () => {
    expect(showBidiControls('\u202Egnp.exe')).toBe('⟨U+202E⟩gnp.exe')
    expect(showBidiControls('a\u2066b\u2069c\u200F')).toBe('a⟨U+2066⟩b⟨U+2069⟩c⟨U+200F⟩')
    expect(showBidiControls('שלום hello 你好')).toBe('שלום hello 你好')
    expect(oneLine('x\u202Eevil.exe')).toBe('x⟨U+202E⟩evil.exe')
  })
})
