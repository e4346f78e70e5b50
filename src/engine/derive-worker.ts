/**
 * The worker thread of a derive pool (derive-pool.ts): derives the pages of events the pool posts, in order, with
 * `indexEvent` (the derivation `rebuild` applies), and posts each page's derivations back, an entry `undefined` where
 * the event's derivation throws (the store derives that one itself and throws its error); for a pool that asks for
 * payloads (an import's), also each event's payload as the SQLite log stores it (`encodePayload`) and its
 * observations' texts that the store compresses (`encodeObservationText`). Each answer is
 * counted in shared memory, so the pool can wait for it without an event loop (inside a store's synchronous
 * transaction).
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
  /** Whether each answer carries the events' encoded payloads too. */
  payloads: boolean
}

/** One page the pool posts (see `DeriveAhead.push`). */
export interface DerivePage {
  events: readonly EventInput[]
  /** The events' payloads as the SQLite log stores them, when the events come without (a rebuild's). */
  storedPayloads?: readonly (string | Uint8Array)[] | undefined
}

/** One page's answer, in the page's order. */
export interface DeriveAnswer {
  derived: (Derivation | undefined)[]
  /** Present when the pool asked for payloads; an entry `undefined` where encoding threw. */
  payloads?: (string | Uint8Array | undefined)[]
  /**
   * With `payloads`: per event, its derivation's observation texts that the SQLite store compresses
   * (`encodeObservationText`), compressed; undefined for a text stored as text, and for an event not derived.
   */
  texts?: ((Uint8Array | undefined)[] | undefined)[]
}

const { timeZone, port, shared, payloads } = workerData as DeriveWorkerData

/** A stored payload as `payloadText` reads it: a BLOB arrives here as a Uint8Array (structured clone drops Buffer). */
function asStored(stored: string | Uint8Array): string | Buffer {
  return typeof stored === 'string' ? stored : Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength)
}
const state = new Int32Array(shared)
try {
  // Loaded here rather than imported above, so that a module that cannot load is reported (state -1), not a hang.
  const { indexEvent } = await import('./index-event.js')
  const encoding = await import('../storage/sqlite/sqlite-payload.js')
  port.on('message', ({ events, storedPayloads }: DerivePage) => {
    const answer: DeriveAnswer = {
      derived: events.map((event, i): Derivation | undefined => {
        try {
          const stored = storedPayloads?.[i]
          const payload: unknown = stored === undefined ? event.payload : JSON.parse(encoding.payloadText(asStored(stored)))
          return indexEvent(stored === undefined ? event : { ...event, payload }, timeZone)
        } catch {
          return undefined
        }
      }),
    }
    if (payloads) {
      answer.payloads = events.map((event) => {
        try {
          return encoding.encodePayload(event.payload)
        } catch {
          return undefined
        }
      })
      answer.texts = answer.derived.map((d) =>
        d?.observations.map((o) => {
          const stored = encoding.encodeObservationText(o.kind, o.text)
          return typeof stored === 'string' ? undefined : stored
        }),
      )
    }
    port.postMessage(answer)
    Atomics.add(state, 0, 1)
    Atomics.notify(state, 0)
  })
  Atomics.store(state, 1, 1)
} catch {
  Atomics.store(state, 1, -1)
}
Atomics.notify(state, 0)
