/**
 * Replay: a session's steps in order (prompts, tool calls and results, errors,
 * messages), played one at a time. Steps are fetched 200 at a time, only the
 * pages that are looked at, so a session of 100k steps replays as well as one of 10.
 */
import type { JSX } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, type ApiError, isAbort, toApiError } from '../api.js'
import { announce } from '../announce.js'
import { Busy, ErrorBox, KindBadge, Link, Time, WindowedList } from '../components.js'
import { humanDuration, isWarningFlag, oneLine, roleTool } from '../format.js'
import { ObservationView } from '../item-detail.js'
import { navigate, replayRoute, type Route } from '../route.js'
import type { Observation, Session, SessionPage } from '../types.js'

/** Steps per request (the server's most). */
const REPLAY_PAGE = 200
/** Playback speeds: steps per second. */
const SPEEDS = [0.5, 1, 2, 4, 8] as const

export function ReplayScreen(props: { route: Route }): JSX.Element {
  const id = props.route.session ?? ''
  const [session, setSession] = useState<Session | null>(null)
  const [total, setTotal] = useState<number | null>(null)
  const [step, setStep] = useState(props.route.step ?? 0)
  const [playing, setPlaying] = useState(false)
  const [speed, setSpeed] = useState(1)
  const [error, setError] = useState<ApiError | null>(null)
  const [locating, setLocating] = useState(props.route.obs !== undefined && props.route.step === undefined)
  const [, setVersion] = useState(0)
  const pages = useRef(new Map<number, Observation[]>())
  const inflight = useRef(new Set<number>())
  /** Pages whose request failed: not asked again automatically (the error is shown). */
  const failed = useRef(new Set<number>())
  const abort = useRef(new AbortController())
  const totalRef = useRef<number | null>(null)
  const knownEnd = useRef<number | null>(null)
  const stepRef = useRef(step)
  stepRef.current = step
  const playingRef = useRef(playing)
  playingRef.current = playing

  const stepAt = (i: number): Observation | undefined => pages.current.get(Math.floor(i / REPLAY_PAGE))?.[i % REPLAY_PAGE]

  /** Fetches page `p` unless it is loaded or on its way; resolves to it, or undefined. */
  const fetchPage = async (p: number): Promise<Observation[] | undefined> => {
    const have = pages.current.get(p)
    if (have !== undefined || inflight.current.has(p) || failed.current.has(p)) return have
    if (totalRef.current !== null && p * REPLAY_PAGE >= totalRef.current && p > 0) return undefined
    inflight.current.add(p)
    try {
      const r = await api<SessionPage>(
        `/v1/sessions/${encodeURIComponent(id)}/observations?offset=${p * REPLAY_PAGE}&limit=${REPLAY_PAGE}`,
        { signal: abort.current.signal },
      )
      pages.current.set(p, r.observations)
      // The count can run ahead of the rows (an observation forgotten since): a short page marks the real end.
      const end = p * REPLAY_PAGE + r.observations.length
      if (r.observations.length < REPLAY_PAGE && end < r.total) knownEnd.current = end
      else if (knownEnd.current !== null && end > knownEnd.current) knownEnd.current = null
      const total = knownEnd.current ?? r.total
      totalRef.current = total
      setSession(r.session)
      setTotal(total)
      setVersion((v) => v + 1)
      return r.observations
    } catch (e) {
      if (!isAbort(e)) {
        failed.current.add(p)
        setError(toApiError(e))
      }
      return undefined
    } finally {
      inflight.current.delete(p)
    }
  }

  // First page; then, for ?obs=, the step of that observation (the server says where it sits).
  useEffect(() => {
    const obs = props.route.obs
    void (async () => {
      await fetchPage(0)
      if (obs === undefined || props.route.step !== undefined) return
      try {
        const r = await api<SessionPage>(`/v1/sessions/${encodeURIComponent(id)}/observations?limit=1&at=${encodeURIComponent(obs)}`, {
          signal: abort.current.signal,
        })
        if (r.position !== null) setStep(r.position)
      } catch (e) {
        if (!isAbort(e)) setError(toApiError(e))
      }
      setLocating(false)
    })()
    return () => abort.current.abort()
  }, [])

  // Keep the current step's page (and, near its end, the next one) loaded; clamp to the last step.
  useEffect(() => {
    if (total === null) return
    if (total > 0 && step > total - 1) {
      setStep(total - 1)
      return
    }
    const p = Math.floor(step / REPLAY_PAGE)
    void fetchPage(p)
    if (step % REPLAY_PAGE >= REPLAY_PAGE - 50) void fetchPage(p + 1)
  }, [step, total])

  // Playback: a step every 1 s / speed; waits for a page still loading; stops at the end.
  useEffect(() => {
    if (!playing) return
    const timer = setInterval(() => {
      const next = stepRef.current + 1
      if (next >= (totalRef.current ?? 0)) {
        setPlaying(false)
        announce('Replay reached the last step')
        return
      }
      if (stepAt(next) === undefined) {
        void fetchPage(Math.floor(next / REPLAY_PAGE))
        return
      }
      setStep(next)
    }, 1000 / speed)
    return () => clearInterval(timer)
  }, [playing, speed])

  // The address keeps the step while paused, so a reload or a shared link opens at it.
  useEffect(() => {
    if (playing || locating) return
    const t = setTimeout(() => navigate(replayRoute(id, { step }), { replace: true }), 400)
    return () => clearTimeout(t)
  }, [step, playing, locating])

  const last = Math.max(0, (total ?? 1) - 1)
  const go = (delta: number): void => setStep((s) => Math.min(last, Math.max(0, s + delta)))
  const togglePlay = (): void => {
    if (!playingRef.current && stepRef.current >= (totalRef.current ?? 0) - 1) setStep(0)
    setPlaying(!playingRef.current)
  }

  // Keyboard: Space plays or pauses, ← and → step (not while typing, nor Space on a button).
  const keys = useRef({ go, togglePlay })
  keys.current = { go, togglePlay }
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return
      const t = e.target as HTMLElement
      if (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable) return
      if (document.querySelector('dialog[open]') !== null) return
      if (e.key === ' ') {
        if (t.tagName === 'BUTTON' || t.tagName === 'A' || t.tagName === 'SUMMARY') return
        e.preventDefault()
        keys.current.togglePlay()
      } else if (e.key === 'ArrowLeft') {
        e.preventDefault()
        keys.current.go(-1)
      } else if (e.key === 'ArrowRight') {
        e.preventDefault()
        keys.current.go(1)
      }
    }
    document.addEventListener('keydown', onKey)
    return () => document.removeEventListener('keydown', onKey)
  }, [])

  const current = stepAt(step)
  const title = session === null ? id : oneLine(session.title ?? session.sessionKey, 120)
  const count = total ?? 0

  return (
    <section class="screen replay" aria-labelledby="replay-h">
      <p class="crumbs">
        <Link to={{ view: 'sessions' }}>← Sessions</Link>
      </p>
      <h1 id="replay-h">
        Replay: <span class="wrap">{title}</span>
      </h1>
      {session !== null ? (
        <p class="muted">
          {session.agent} · {session.project ?? session.projectId} · started <Time iso={session.startedAt} full /> ·{' '}
          {humanDuration(Date.parse(session.lastEventAt) - Date.parse(session.startedAt))} · {count} step{count === 1 ? '' : 's'}
        </p>
      ) : null}
      <ErrorBox error={error} />
      <Busy loading={total === null && error === null} what="the session" />
      {total === 0 ? <p>This session has no steps.</p> : null}
      {total !== null && total > 0 ? (
        <>
          <fieldset class="player" aria-label="Player" data-testid="replay-controls">
            <button
              type="button"
              class="button"
              onClick={() => go(-1)}
              disabled={step <= 0}
              aria-keyshortcuts="ArrowLeft"
              data-testid="replay-prev"
            >
              <span aria-hidden="true">◀ </span>Previous step
            </button>
            <button type="button" class="button primary" onClick={togglePlay} aria-keyshortcuts="Space" data-testid="replay-play">
              <span aria-hidden="true">{playing ? '❚❚ ' : '▶ '}</span>
              {playing ? 'Pause' : 'Play'}
            </button>
            <button
              type="button"
              class="button"
              onClick={() => go(1)}
              disabled={step >= last}
              aria-keyshortcuts="ArrowRight"
              data-testid="replay-next"
            >
              Next step<span aria-hidden="true"> ▶</span>
            </button>
            <label class="field inline">
              <span>Speed</span>
              <select
                value={String(speed)}
                onChange={(e) => setSpeed(Number((e.currentTarget as HTMLSelectElement).value))}
                data-testid="replay-speed"
              >
                {SPEEDS.map((s) => (
                  <option key={s} value={String(s)}>
                    {s}×
                  </option>
                ))}
              </select>
            </label>
            <label class="scrubber-label" for="replay-step">
              Step
            </label>
            <input
              id="replay-step"
              class="scrubber"
              type="range"
              min={1}
              max={count}
              step={1}
              value={step + 1}
              aria-valuetext={`Step ${step + 1} of ${count}`}
              onInput={(e) => setStep(Number((e.currentTarget as HTMLInputElement).value) - 1)}
              data-testid="replay-step"
            />
            <output for="replay-step" data-testid="replay-position">
              {step + 1} / {count}
            </output>
          </fieldset>
          <p class="hint">Keys: Space plays or pauses; ← and → go one step.</p>
          <div class="split">
            <div class="split-main">
              <h2 class="sub">Steps so far</h2>
              <WindowedList
                count={step + 1}
                rowRem={2.5}
                label="Steps so far"
                testid="replay-steps"
                scrollTo={step}
                rowClass={(i) => (i === step ? 'selected' : '')}
                renderRow={(i) => {
                  const o = stepAt(i)
                  if (o === undefined) {
                    queueMicrotask(() => void fetchPage(Math.floor(i / REPLAY_PAGE)))
                    return <span class="row-button muted">Step {i + 1}: loading…</span>
                  }
                  return (
                    <button
                      type="button"
                      class="row-button"
                      aria-current={i === step ? 'step' : undefined}
                      onClick={() => setStep(i)}
                      data-testid="replay-row"
                    >
                      <span class="cell num">{i + 1}</span>
                      <span class="cell time">
                        <Time iso={o.time} />
                      </span>
                      <KindBadge kind={o.kind} />
                      <span class="cell role">{roleTool(o.role, o.tool)}</span>
                      {o.flags.some(isWarningFlag) ? (
                        <span class="badge badge-warn">
                          ⚠<span class="visually-hidden"> flagged</span>
                        </span>
                      ) : null}
                      {(o.derivedMemories?.length ?? 0) > 0 ? <span class="badge badge-info">{o.derivedMemories?.length} mem</span> : null}
                      <span class="cell line">{oneLine(o.text, 200)}</span>
                    </button>
                  )
                }}
              />
            </div>
            <section
              class="split-side"
              data-testid="replay-current"
              // biome-ignore lint/a11y/noNoninteractiveTabindex: the side pane scrolls (overflow: auto), so it takes focus for keyboard scrolling
              tabIndex={0}
              aria-label="Current step"
            >
              <h2 class="sub">
                Step {step + 1} of {count}
              </h2>
              {current === undefined ? (
                <Busy loading what={`step ${step + 1}`} />
              ) : (
                <>
                  <ObservationView obs={current} headingLevel={3} showReplayLink={false} />
                  <DerivedMemories ids={current.derivedMemories ?? []} />
                </>
              )}
            </section>
          </div>
        </>
      ) : null}
    </section>
  )
}

function DerivedMemories(props: { ids: readonly string[] }): JSX.Element {
  return (
    <div class="derived" data-testid="derived-memories">
      <h3 class="sub">Memories derived from this step</h3>
      {props.ids.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul class="idlist">
          {props.ids.map((m) => (
            <li key={m}>
              <Link to={{ view: 'memories', memory: m }} testid="derived-memory-link">
                {m}
              </Link>
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
