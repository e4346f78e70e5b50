import { existsSync } from 'node:fs'
import { availableParallelism, cpus, type CpuInfo } from 'node:os'
import { fileURLToPath } from 'node:url'
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads'
import type { EventInput } from '../core/types.js'
import type { Derivation, DeriveAhead } from '../storage/store.js'
import type { DeriveAnswer, DerivePage } from './derive-worker.js'

/** A `DeriveAhead` on worker threads (for a rebuild, or an import's batches), to close when the work is done. */
export interface DerivePool extends DeriveAhead {
  /** Hands over the next page of events (logged or about to be appended), in order; see `DeriveAhead.push`. */
  push(events: readonly EventInput[], storedPayloads?: readonly (string | Uint8Array)[]): void
  /**
   * `shift`, with the page's payloads as the SQLite log stores them (`AppendItem.storedPayload`) when the pool was
   * opened with `payloads`; `payloads` is undefined otherwise, and once the workers failed.
   */
  shiftWithPayloads(): DeriveAnswer
  /** Stops the workers. */
  close(): Promise<void>
}

/** Smallest log a rebuild starts workers for: below it, loading the derivation's modules in a thread costs more than it saves. */
export const DERIVE_POOL_MIN_EVENTS = 5000

/**
 * Smallest import, in bytes of the files it reads, that starts workers: about `DERIVE_POOL_MIN_EVENTS` events of
 * the bench's transcripts (23.7 MB for 8,191 events) is 14 MB; this is half that, since an import also parses.
 */
export const DERIVE_POOL_MIN_IMPORT_BYTES = 8 * 1024 * 1024

/** Longest wait for one page's derivations, ms: past it (a worker stuck or gone), the pool gives up and the store derives the rest. */
const PAGE_WAIT_MS = 30_000

/**
 * The worker script: beside this module in tsc's output (dist/engine/), or from the CLI's bundle
 * (dist/adapters/cli/program.bundle.cjs, where `import.meta.url` is the bundle's) two folders up. Undefined when
 * there is none (running from the TypeScript sources, as the tests do).
 */
function workerScript(): URL | undefined {
  for (const candidate of ['./derive-worker.js', '../../engine/derive-worker.js']) {
    const url = new URL(candidate, import.meta.url)
    if (existsSync(fileURLToPath(url))) return url
  }
  return undefined
}

/**
 * Threads a pool starts: one per idle core besides the writer's, at most 2 (past that the writer is the bottleneck).
 * On a machine whose cores are all busy a worker only makes the writer wait for it (the 10k bench store's rebuild at
 * load ~9 on 2 cores: 6.4-6.7 s with one, 5.9-6.3 s without).
 *
 * @param cores - Logical cores (default `availableParallelism()`).
 * @param busy - Cores busy now, 0–`cores` (`busyCores`). Default 0.
 * @returns 0, 1 or 2.
 */
export function deriveThreads(cores = availableParallelism(), busy = 0): number {
  return Math.max(0, Math.min(2, cores - 1, Math.floor(cores - busy)))
}

/** How long `busyCores` watches the cores, ms. */
export const BUSY_SAMPLE_MS = 100

/**
 * How many cores are busy now: the share of time each core was not idle between two readings of the kernel's CPU
 * times (`os.cpus()`), `sampleMs` apart, summed over the cores. Not the load average: it lags by a minute, so it still
 * counts a process that has just ended (the benchmark's floor run before a rebuild kept its worker from ever starting).
 *
 * @param sampleMs - Time between the two readings, ms. Default `BUSY_SAMPLE_MS` (100).
 * @param read - Reads the per-core times (default `os.cpus`); `wait` waits `ms` (default a timer). Tests give both.
 * @returns 0–the number of cores; 0 where the OS reports no times.
 */
export async function busyCores(
  sampleMs = BUSY_SAMPLE_MS,
  read: () => CpuInfo[] = cpus,
  wait: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<number> {
  const before = read()
  await wait(sampleMs)
  const after = read()
  let busy = 0
  for (const [i, a] of after.entries()) {
    const b = before[i]
    if (b === undefined) continue
    const total = (t: CpuInfo['times']) => t.user + t.nice + t.sys + t.idle + t.irq
    const elapsed = total(a.times) - total(b.times)
    if (elapsed > 0) busy += 1 - (a.times.idle - b.times.idle) / elapsed
  }
  return busy
}

/**
 * `deriveThreads` for this machine now: its cores and how busy they are (`busyCores`, which waits `BUSY_SAMPLE_MS`);
 * 0 at once on one core, where no worker could start anyway.
 */
export async function deriveThreadsNow(): Promise<number> {
  const cores = availableParallelism()
  return cores < 2 ? 0 : deriveThreads(cores, await busyCores())
}

/**
 * Starts `threads` workers that derive events as `indexEvent(event, timeZone)` does (derive-worker.ts), for
 * `EventLog.rebuild` or an import to write while they derive. Pages go to the workers in turn and come back in the order they
 * were pushed. When a worker cannot load or does not answer within `PAGE_WAIT_MS`, the pool stops using its workers
 * and answers `undefined` for every event from then on (the store derives them itself): slower, never different.
 *
 * @param options.threads - Workers to start, ≥ 1 (see `deriveThreads`).
 * @param options.payloads - Whether the workers also encode each event's payload as the SQLite log stores it
 *   (`shiftWithPayloads`; for an import, whose events are not logged yet). Default: false.
 * @param options.script - The worker script; default the built derive-worker.js (see `workerScript`).
 * @returns The pool, or undefined when there is no worker script or `threads` < 1.
 */
export function openDerivePool(options: { timeZone: string; threads: number; payloads?: boolean; script?: URL }): DerivePool | undefined {
  const script = options.script ?? workerScript()
  if (script === undefined || options.threads < 1) return undefined
  const workers = Array.from({ length: options.threads }, () => {
    const shared = new SharedArrayBuffer(8)
    const { port1, port2 } = new MessageChannel()
    const worker = new Worker(script, {
      workerData: { timeZone: options.timeZone, port: port2, shared, payloads: options.payloads ?? false },
      transferList: [port2],
    })
    // The thread must not keep the process alive once the rebuild is over, whatever happens to close().
    worker.unref()
    return { worker, port: port1, state: new Int32Array(shared), taken: 0 }
  })
  /** Lengths of the pages pushed and not taken, oldest first. */
  const pending: number[] = []
  let pushed = 0
  let taken = 0
  let broken = false

  /** The next answer of `w`, or undefined when it failed to load or did not answer in time. */
  const answer = (w: (typeof workers)[number]): DeriveAnswer | undefined => {
    const deadline = Date.now() + PAGE_WAIT_MS
    for (;;) {
      const answered = Atomics.load(w.state, 0)
      const message = receiveMessageOnPort(w.port as MessagePort)
      if (message !== undefined) return message.message as DeriveAnswer
      if (Atomics.load(w.state, 1) === -1) return undefined
      const left = deadline - Date.now()
      if (left <= 0) return undefined
      Atomics.wait(w.state, 0, answered, left)
    }
  }

  return {
    push(events: readonly EventInput[], storedPayloads?: readonly (string | Uint8Array)[]): void {
      pending.push(events.length)
      if (!broken) workers[pushed % workers.length]!.port.postMessage({ events, storedPayloads } satisfies DerivePage)
      pushed++
    },
    shiftWithPayloads(): DeriveAnswer {
      const length = pending.shift()
      if (length === undefined) throw new Error('DerivePool.shift: no page was pushed')
      const w = workers[taken % workers.length]!
      taken++
      const got = broken ? undefined : answer(w)
      if (got === undefined || got.derived.length !== length || (options.payloads && got.payloads?.length !== length)) {
        broken = true
        return { derived: new Array<undefined>(length).fill(undefined) }
      }
      return got
    },
    shift(): (Derivation | undefined)[] {
      return this.shiftWithPayloads().derived
    },
    async close(): Promise<void> {
      for (const w of workers) w.port.close()
      await Promise.all(workers.map((w) => w.worker.terminate()))
    },
  }
}
