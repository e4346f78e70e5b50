/** Live: the newest observations of a project, then each new one as it is captured. */
import type { JSX } from 'preact'
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { api, type ApiError, isAbort, query, toApiError } from '../api.js'
import { announce } from '../announce.js'
import { ErrorBox, KindBadge, Time, WindowedList } from '../components.js'
import { humanDuration, isWarningFlag, oneLine, roleTool } from '../format.js'
import { ObservationView } from '../item-detail.js'
import { LIVE_CAP, mergeNewest } from '../live-buffer.js'
import { followStream, type StreamState } from '../sse.js'
import { KNOWN_AGENTS, OBSERVATION_KINDS, type Observation, type ObservationList } from '../types.js'

export function LiveScreen(props: { project: string }): JSX.Element {
  const [agent, setAgent] = useState('')
  const [kind, setKind] = useState('')
  const [rows, setRows] = useState<readonly Observation[]>([])
  const [paused, setPaused] = useState(false)
  const [held, setHeld] = useState<readonly Observation[]>([])
  const [selectedId, setSelectedId] = useState<string | null>(null)
  const [stream, setStream] = useState<{ state: StreamState; waitMs?: number; error?: string }>({ state: 'connecting' })
  const [error, setError] = useState<ApiError | null>(null)
  const pausedRef = useRef(paused)
  pausedRef.current = paused
  // Older events, on demand: where the next older page starts, and how many rows are kept (grows as older pages come).
  const [olderBefore, setOlderBefore] = useState<number | null>(null)
  const [olderLoading, setOlderLoading] = useState(false)
  const capRef = useRef(LIVE_CAP)

  useEffect(() => {
    setRows([])
    setHeld([])
    setError(null)
    setOlderBefore(null)
    capRef.current = LIVE_CAP
    const filters = { project: props.project, agent, kind }
    const controller = new AbortController()
    let listRequested = false
    const loadList = (): void => {
      if (listRequested) return
      listRequested = true
      api<ObservationList>(`/v1/observations${query({ ...filters, limit: 100 })}`, { signal: controller.signal })
        .then((r) => {
          setRows((cur) => mergeNewest(cur, r.observations, capRef.current))
          setOlderBefore(r.nextBefore ?? null)
        })
        .catch((e: unknown) => {
          if (!isAbort(e)) setError(toApiError(e))
        })
    }
    const add = (o: Observation): void => {
      if (pausedRef.current) setHeld((cur) => mergeNewest(cur, [o]))
      else setRows((cur) => mergeNewest(cur, [o], capRef.current))
    }
    // The list is read once the stream is open, so nothing captured in between is missed (duplicates are dropped).
    const stop = followStream({
      url: `/v1/stream${query(filters)}`,
      onState: (state, detail) => {
        setStream({ state, ...(detail ?? {}) })
        if (state === 'open' || state === 'retrying') loadList()
      },
      onEvent: (e) => {
        if (e.event !== 'observation') return
        try {
          add(JSON.parse(e.data) as Observation)
        } catch {
          // A malformed event: skipped.
        }
      },
    })
    return () => {
      stop()
      controller.abort()
    }
  }, [props.project, agent, kind])

  const loadOlder = (): void => {
    if (olderBefore === null || olderLoading) return
    setOlderLoading(true)
    api<ObservationList>(`/v1/observations${query({ project: props.project, agent, kind, limit: 100, before: olderBefore })}`)
      .then((r) => {
        capRef.current += r.observations.length
        setRows((cur) => mergeNewest(cur, r.observations, capRef.current))
        setOlderBefore(r.nextBefore ?? null)
        announce(`Loaded ${r.observations.length} older event${r.observations.length === 1 ? '' : 's'}`)
      })
      .catch((e: unknown) => setError(toApiError(e)))
      .finally(() => setOlderLoading(false))
  }

  const togglePause = (): void => {
    if (paused) {
      setRows((cur) => mergeNewest(cur, held))
      setHeld([])
    }
    setPaused(!paused)
  }

  const agents = useMemo(() => {
    const set = new Set<string>(KNOWN_AGENTS)
    for (const r of rows) if (r.agent) set.add(r.agent)
    return [...set].sort()
  }, [rows])
  const selected = rows.find((r) => r.id === selectedId) ?? held.find((r) => r.id === selectedId) ?? null

  return (
    <section class="screen" aria-labelledby="live-h">
      <h1 id="live-h">Live</h1>
      <fieldset class="toolbar" aria-label="Filters">
        <label class="field inline">
          <span>Agent</span>
          <select data-testid="live-agent" value={agent} onChange={(e) => setAgent((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">All agents</option>
            {agents.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <label class="field inline">
          <span>Kind</span>
          <select data-testid="live-kind" value={kind} onChange={(e) => setKind((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">All kinds</option>
            {OBSERVATION_KINDS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="button" aria-pressed={paused} onClick={togglePause} data-testid="live-pause">
          {paused ? 'Resume' : 'Pause'}
        </button>
        <p class="stream-state" data-testid="live-state">
          <span class={`dot dot-${stream.state}`} aria-hidden="true" />
          {streamLabel(stream, paused, held.length)}
        </p>
      </fieldset>
      <ErrorBox error={error} />
      <div class="split">
        <div class="split-main">
          <p class="muted count">
            {rows.length === 0
              ? 'No events yet: they appear here as agents work.'
              : `${rows.length} event${rows.length === 1 ? '' : 's'} (newest first, the last ${capRef.current} kept)`}
          </p>
          {rows.length > 0 ? (
            <WindowedList
              count={rows.length}
              rowRem={2.5}
              label="Events, newest first"
              testid="live-list"
              rowClass={(i) => (rows[i]?.id === selectedId ? 'selected' : '')}
              renderRow={(i) => {
                const o = rows[i]
                if (o === undefined) return null
                return (
                  <button
                    type="button"
                    class="row-button"
                    aria-current={o.id === selectedId ? 'true' : undefined}
                    onClick={() => setSelectedId(o.id)}
                    data-testid="live-row"
                  >
                    <span class="cell time">
                      <Time iso={o.time} />
                    </span>
                    <span class="cell agent">{o.agent ?? ''}</span>
                    <KindBadge kind={o.kind} />
                    <span class="cell role">{roleTool(o.role, o.tool)}</span>
                    {o.flags.some(isWarningFlag) ? (
                      <span class="badge badge-warn" title={o.flags.join(', ')}>
                        ⚠<span class="visually-hidden"> flagged</span>
                      </span>
                    ) : null}
                    <span class="cell line">{oneLine(o.text, 300)}</span>
                  </button>
                )
              }}
            />
          ) : null}
          {olderBefore !== null ? (
            <button type="button" class="button" onClick={loadOlder} disabled={olderLoading} data-testid="live-older">
              {olderLoading ? 'Loading older events…' : 'Load older events'}
            </button>
          ) : null}
        </div>
        <aside
          class="split-side"
          aria-label="Selected event"
          // biome-ignore lint/a11y/noNoninteractiveTabindex: the side pane scrolls (overflow: auto), so it takes focus for keyboard scrolling
          tabIndex={0}
        >
          {selected !== null ? (
            <ObservationView obs={selected} headingLevel={2} />
          ) : (
            <p class="muted">Select an event to see it in full.</p>
          )}
        </aside>
      </div>
    </section>
  )
}

function streamLabel(s: { state: StreamState; waitMs?: number; error?: string }, paused: boolean, held: number): string {
  if (paused) return `Paused: ${held} new event${held === 1 ? '' : 's'} held`
  switch (s.state) {
    case 'connecting':
      return 'Connecting…'
    case 'open':
      return 'Live'
    case 'retrying':
      return `Disconnected (${s.error ?? 'no reason given'}); retrying in ${humanDuration(s.waitMs ?? 0)}`
    case 'closed':
      return 'Stopped'
  }
}
