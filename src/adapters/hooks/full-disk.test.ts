import { execFileSync } from 'node:child_process'
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { openMnemo } from '../../runtime/open-mnemo.js'
import { runCliCaptured } from '../../testing/run-cli.js'
import { runHook } from './run-hook.js'

// Issue 17 item 14 (disk part), on a real full disk: MNEMO_HOME on an 8 MB tmpfs filled to the last byte.
// 8 MB, not 2 MB: a fresh store's first write (database plus WAL; 16 KiB pages since schema 11, the database alone
// about 1.1 MB) alone fills 2 MB.
// Mounting needs root and `mount`; elsewhere the suite skips and its name says why.

const base = mkdtempSync(path.join(tmpdir(), 'mnemo-full-disk-'))
const mnt = path.join(base, 'disk')
mkdirSync(mnt)

function tryMount(): string | undefined {
  if (process.getuid?.() !== 0) return 'not running as root'
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mnt], { stdio: 'pipe' })
    return undefined
  } catch (error) {
    return `mount -t tmpfs failed (${String((error as { stderr?: Buffer }).stderr ?? error).trim()})`
  }
}
const skipReason = tryMount()

afterAll(() => {
  if (skipReason !== undefined) return void rmSync(base, { recursive: true, force: true })
  try {
    execFileSync('umount', [mnt], { stdio: 'pipe' })
  } catch (error) {
    // Still busy (a failed assertion above may have left a file open): detach it so no mount outlives the run, then fail.
    execFileSync('umount', ['-l', mnt], { stdio: 'pipe' })
    rmSync(base, { recursive: true, force: true })
    throw error
  }
  rmSync(base, { recursive: true, force: true })
})

const home = path.join(mnt, 'home')
/** HOME on another file system: where a hook keeps an event its data directory cannot take (spool/elsewhere). */
const userHome = path.join(base, 'user')
const filler = path.join(mnt, 'filler')
const env = { MNEMO_HOME: home, HOME: userHome }

async function hook(event: string, fields: Record<string, unknown>): Promise<{ code: number | undefined; stderr: string }> {
  const input = new PassThrough()
  let code: number | undefined
  let stderr = ''
  const run = runHook(event, {
    stdin: input,
    stdout: { write: () => undefined },
    stderr: { write: (t: string) => (stderr += t) },
    env,
    cwd: '/work/demo-app',
    exit: (c) => (code = c),
  })
  input.end(
    JSON.stringify({
      hook_event_name: event,
      session_id: 'sess-disk',
      transcript_path: '/tmp/sess-disk.jsonl',
      cwd: '/work/demo-app',
      ...fields,
    }),
  )
  await run
  return { code, stderr }
}

const cli = (argv: string[]) => runCliCaptured(argv, { env, cwd: '/work/demo-app' })

/** Writes `filler` until the file system answers ENOSPC; returns the bytes written. */
function fillDisk(): number {
  const fd = openSync(filler, 'w')
  const chunk = Buffer.alloc(4096, 0x61)
  let written = 0
  try {
    for (;;) {
      try {
        written += writeSync(fd, chunk)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOSPC') return written
        throw error
      }
    }
  } finally {
    closeSync(fd)
  }
}

/** Every spooled event file, in the data directory's spool and in spool/elsewhere of the default one. */
function spooled(): string[] {
  const dirs = [path.join(home, 'spool'), path.join(userHome, '.mnemo', 'spool'), path.join(userHome, '.mnemo', 'spool', 'elsewhere')]
  return dirs
    .filter((d) => existsSync(d))
    .flatMap((d) =>
      readdirSync(d)
        .filter((f) => f.endsWith('.json'))
        .map((f) => path.join(d, f)),
    )
}

/** Files on the small disk this process still has open (a store whose open failed once kept its descriptors, so umount failed). */
function openOnDisk(): string[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`)
      return target.startsWith(`${mnt}/`) ? [target] : []
    } catch {
      return []
    }
  })
}

async function observationsWith(text: string): Promise<number> {
  const m = openMnemo({ env })
  try {
    return (
      await m.engine.browseObservations({ projectIds: (await m.engine.listProjects()).map((p) => p.id), order: 'asc', limit: 100 })
    ).filter((o) => JSON.stringify(o).includes(text)).length
  } finally {
    await m.close()
  }
}

describe.skipIf(skipReason !== undefined)(
  `a full disk under MNEMO_HOME (8 MB tmpfs)${skipReason ? ` — skipped: ${skipReason}` : ''}`,
  () => {
    it('keeps a hook event elsewhere, status and recall still answer naming the disk, and the event is stored once space frees', async () => {
      expect(await hook('UserPromptSubmit', { prompt: 'migrate the ledger tables before the disk filled' })).toMatchObject({ code: 0 })
      expect(await observationsWith('before the disk filled')).toBe(1)
      expect(fillDisk()).toBeGreaterThan(0)

      const full = await hook('PostToolUse', {
        tool_name: 'Bash',
        tool_use_id: 't-full',
        tool_input: { command: 'echo kept-while-full' },
        tool_response: { stdout: 'kept-while-full marker output', stderr: '' },
      })
      expect(full.code).toBe(0)
      const kept = spooled()
      expect(kept).toHaveLength(1)
      expect(kept[0]!.startsWith(mnt)).toBe(false)
      expect(readFileSync(kept[0]!, 'utf8')).toContain('kept-while-full')
      expect(full.stderr).toContain(kept[0]!)

      const status = await cli(['status', '--json'])
      expect(status.code, status.stderr).toBe(0)
      const doc = JSON.parse(status.stdout) as { readOnly: boolean; readOnlyReason: string; counts: { events: number } }
      expect(doc).toMatchObject({ readOnly: true, counts: { events: 1 } })
      expect(doc.readOnlyReason).toContain(`MNEMO_HOME ${home} cannot be written: its disk is full (0 bytes free)`)
      const recall = await cli(['recall', 'ledger tables', '--json'])
      expect(recall.code, recall.stderr).toBe(0)
      expect(recall.stdout).toContain('migrate the ledger tables before the disk filled')

      rmSync(filler)
      expect(await hook('UserPromptSubmit', { prompt: 'space is back' })).toMatchObject({ code: 0 })
      expect(spooled()).toEqual([])
      expect(await observationsWith('kept-while-full')).toBe(1)
      // Further commands and hooks store it no second time.
      expect((await cli(['status', '--json'])).code).toBe(0)
      expect(await hook('UserPromptSubmit', { prompt: 'and once more' })).toMatchObject({ code: 0 })
      expect(await observationsWith('kept-while-full')).toBe(1)
      expect(await observationsWith('before the disk filled')).toBe(1)
      // Every open that failed on the full disk closed what it had opened.
      expect(openOnDisk()).toEqual([])
    })
  },
)
