/** Search: recall over a project with the channels that found each hit. */
import type { JSX } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, ApiError, isAbort, toApiError } from '../api.js'
import { announce } from '../announce.js'
import { Busy, ErrorBox, Flags, KindBadge, Link, Time } from '../components.js'
import { ItemDetail } from '../item-detail.js'
import { navigate, replayRoute, type Route } from '../route.js'
import { channelBadges, defaultChannels, recallBody } from '../recall.js'
import { RECALL_CHANNELS, type Hit, type RecallResult } from '../types.js'

export function SearchScreen(props: {
  project: string
  route: Route
  channels?: { name: string; on: boolean }[] | undefined
}): JSX.Element {
  const [text, setText] = useState(props.route.q ?? '')
  // Ticked: the channels recall uses (weight above 0, embedder configured), as `mnemo status` lists them.
  const [channels, setChannels] = useState<string[]>(defaultChannels(props.channels))
  const [limitText, setLimitText] = useState('20')
  const [result, setResult] = useState<RecallResult | null>(null)
  const [error, setError] = useState<ApiError | null>(null)
  const [loading, setLoading] = useState(false)
  const [open, setOpen] = useState<Set<string>>(new Set())
  const controller = useRef<AbortController | null>(null)

  const run = (q: string): void => {
    if (q.trim() === '') return
    if (channels.length === 0) {
      setError(new ApiError(0, 'INVALID_INPUT', 'check at least one channel', null))
      return
    }
    controller.current?.abort()
    const c = new AbortController()
    controller.current = c
    setLoading(true)
    setError(null)
    api<RecallResult>('/v1/recall', {
      method: 'POST',
      body: recallBody(q, props.project, clampInt(limitText, 1, 100, 20), channels),
      signal: c.signal,
    })
      .then((r) => {
        setResult(r)
        setOpen(new Set())
        announce(`${r.hits.length} hit${r.hits.length === 1 ? '' : 's'} for “${q}”`)
      })
      .catch((e: unknown) => {
        if (!isAbort(e)) setError(toApiError(e))
      })
      .finally(() => {
        if (controller.current === c) setLoading(false)
      })
  }

  useEffect(() => {
    if (props.route.q !== undefined) run(props.route.q)
    return () => controller.current?.abort()
  }, [])

  const submit = (e: Event): void => {
    e.preventDefault()
    const q = text.trim()
    if (q === '') return
    if (props.route.q !== q) navigate({ view: 'search', q }, { replace: true })
    run(q)
  }

  const toggle = (id: string): void =>
    setOpen((cur) => {
      const next = new Set(cur)
      if (next.has(id)) next.delete(id)
      else next.add(id)
      return next
    })

  return (
    <section class="screen" aria-labelledby="search-h">
      <h1 id="search-h">Search</h1>
      <search aria-label="Recall">
        <form class="searchform" onSubmit={submit}>
          <div class="field grow">
            <label for="search-q">Query</label>
            <input
              id="search-q"
              type="search"
              value={text}
              onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
              data-testid="search-input"
              required
              maxLength={16000}
            />
          </div>
          <fieldset class="channels">
            <legend>Channels</legend>
            {RECALL_CHANNELS.map((c) => (
              <label key={c} class="check">
                <input
                  type="checkbox"
                  checked={channels.includes(c)}
                  onChange={(e) => {
                    const on = (e.currentTarget as HTMLInputElement).checked
                    setChannels((cur) => (on ? [...cur, c] : cur.filter((x) => x !== c)))
                  }}
                  data-testid={`channel-${c}`}
                />
                {c}
              </label>
            ))}
          </fieldset>
          <div class="field narrow">
            <label for="search-limit">Limit</label>
            <input
              id="search-limit"
              type="number"
              min={1}
              max={100}
              value={limitText}
              onInput={(e) => setLimitText((e.currentTarget as HTMLInputElement).value)}
              data-testid="search-limit"
            />
          </div>
          <button type="submit" class="button primary" data-testid="search-submit" disabled={loading}>
            Search
          </button>
        </form>
      </search>
      <ErrorBox error={error} />
      <Busy loading={loading} what="hits" />
      {result !== null ? (
        <div class="results">
          {result.warnings.length > 0 ? (
            <ul class="warnings" aria-label="Warnings" data-testid="search-warnings">
              {result.warnings.map((w, i) => (
                <li key={i}>{w}</li>
              ))}
            </ul>
          ) : null}
          <h2 class="sub" data-testid="search-count">
            {result.hits.length} hit{result.hits.length === 1 ? '' : 's'} for “{result.query}”
          </h2>
          <ol class="hits">
            {result.hits.map((h, i) => (
              <HitRow key={h.id} hit={h} n={i + 1} open={open.has(h.id)} onToggle={() => toggle(h.id)} />
            ))}
          </ol>
        </div>
      ) : null}
    </section>
  )
}

/** One hit: score, kind, time, snippet, the channels that found it; expands to the full item. */
export function HitRow(props: {
  hit: Pick<Hit, 'id' | 'type' | 'kind' | 'time' | 'snippet' | 'sessionId'> &
    Partial<Pick<Hit, 'score' | 'flags' | 'channels' | 'viaNeighbor'>>
  n: number
  open: boolean
  onToggle: () => void
  testid?: string
}): JSX.Element {
  const h = props.hit
  const detailId = `detail-${h.id}`
  return (
    <li class="hit" data-testid={props.testid ?? 'hit-row'}>
      <div class="hit-head">
        <button
          type="button"
          class="button quiet expander"
          aria-expanded={props.open}
          aria-controls={detailId}
          onClick={props.onToggle}
          data-testid="hit-expand"
        >
          <span aria-hidden="true">{props.open ? '▾' : '▸'}</span> {props.open ? 'Hide' : 'Show'} {h.type} {props.n}
        </button>
        {h.score !== undefined && h.score > 0 ? (
          <span class="score" title="Fused relevance">
            {h.score.toFixed(3)}
          </span>
        ) : null}
        <KindBadge kind={h.kind} />
        <span class="muted">{h.type}</span>
        <Time iso={h.time} />
        {Object.keys(h.channels ?? {}).length > 0 || h.viaNeighbor ? (
          <span class="flags">
            <span class="visually-hidden">Found by:</span>
            {channelBadges(h).map((b) => (
              <span key={b} class="badge badge-channel">
                {b}
              </span>
            ))}
            {h.viaNeighbor ? <span class="badge badge-channel">via neighbour</span> : null}
          </span>
        ) : null}
        <Flags flags={h.flags ?? []} />
        {h.sessionId !== null ? (
          <Link to={replayRoute(h.sessionId, h.type === 'observation' ? { obs: h.id } : {})} class="small">
            Session replay
          </Link>
        ) : null}
      </div>
      {/* biome-ignore lint/a11y/useKeyWithClickEvents: a click on the snippet is the mouse's shortcut for the Show button above, which the keyboard uses */}
      <p class="snippet" onClick={props.onToggle}>
        {h.snippet}
      </p>
      <div id={detailId} hidden={!props.open}>
        {props.open ? <ItemDetail id={h.id} /> : null}
      </div>
    </li>
  )
}

function clampInt(v: string, min: number, max: number, fallback: number): number {
  const n = Math.round(Number(v))
  if (!Number.isFinite(n) || v.trim() === '') return fallback
  return Math.min(max, Math.max(min, n))
}
