/**
 * The worker thread of a derive pool (derive-pool.ts): derives the pages of events the pool posts, in order, with
 * `indexEvent` (the derivation `rebuild` applies), and posts each page's derivations back, an entry `undefined` where
 * the event's derivation throws (the store derives that one itself and throws its error). Each answer is counted in
 * shared memory, so the pool can wait for it without an event loop (inside a store's synchronous transaction).
 */
import { type MessagePort, workerData } from 'node:worker_threads'
import type { EventInput } from '../core/types.js'
import type { Derivation } from '../storage/store.js'

/** What the pool starts this worker with. */
interface DeriveWorkerData {
  /** IANA zone the indexed dates are written in (`indexEvent`'s `timeZone`). */
  timeZone: string
  /** Where pages come in and derivations go out. */
  port: MessagePort
  /** Int32 [answers posted, state: 0 loading, 1 ready, -1 failed to load]. */
  shared: SharedArrayBuffer
}

const { timeZone, port, shared } = workerData as DeriveWorkerData
const state = new Int32Array(shared)
try {
  // Loaded here rather than imported above, so that a module that cannot load is reported (state -1), not a hang.
  const { indexEvent } = await import('./index-event.js')
  port.on('message', (events: EventInput[]) => {
    const out = events.map((event): Derivation | undefined => {
      try {
        return indexEvent(event, timeZone)
      } catch {
        return undefined
      }
    })
    port.postMessage(out)
    Atomics.add(state, 0, 1)
    Atomics.notify(state, 0)
  })
  Atomics.store(state, 1, 1)
} catch {
  Atomics.store(state, 1, -1)
}
Atomics.notify(state, 0)
