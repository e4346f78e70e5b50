import { afterEach } from 'vitest'
import { tempDir } from './test-mnemo.js'

/**
 * For a test file: returns `scratch()`, which makes a fresh temp folder that is removed after the
 * test, and `cleanups`, where the test adds its own undo steps (run after each test, last first).
 * Call it at the top of the file.
 */
export function useScratch(): { scratch: () => string; cleanups: (() => void)[] } {
  const cleanups: (() => void)[] = []
  afterEach(() => {
    while (cleanups.length > 0) cleanups.pop()!()
  })
  const scratch = (): string => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    return t.dir
  }
  return { scratch, cleanups }
}
