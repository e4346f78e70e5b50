import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'

/**
 * Makes `dir` and everything in it (or a single file) unwritable for this process, as a user
 * would find a data directory they lack rights to: `chmod -R a-w` for an
 * ordinary user; for root, whom modes do not stop, `chattr -R +i` (immutable).
 *
 * @returns The function that makes it writable again (call it before removing
 *   `dir`), or undefined when this machine offers no way (root without chattr
 *   or on a file system without the immutable flag).
 */
export function makeUnwritable(dir: string): (() => void) | undefined {
  if (process.getuid?.() !== 0) {
    const all = statSync(dir).isFile() ? [dir] : [dir, ...readdirSync(dir, { recursive: true }).map((f) => path.join(dir, String(f)))]
    for (const f of all) chmodSync(f, statSync(f).mode & ~0o222)
    return () => {
      for (const f of all) chmodSync(f, statSync(f).mode | 0o200)
    }
  }
  const set = spawnSync('chattr', ['-R', '+i', dir], { stdio: 'ignore' })
  if (set.status !== 0) return undefined
  return () => {
    spawnSync('chattr', ['-R', '-i', dir], { stdio: 'ignore' })
  }
}

/** Whether `makeUnwritable` works here (probed once on a scratch folder). */
export const CAN_MAKE_UNWRITABLE: boolean = (() => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mnemo-unwritable-'))
  try {
    writeFileSync(path.join(dir, 'f'), 'x')
    const restore = makeUnwritable(dir)
    if (!restore) return false
    let blocked = false
    try {
      writeFileSync(path.join(dir, 'g'), 'x')
    } catch {
      blocked = true
    }
    restore()
    return blocked
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})()
