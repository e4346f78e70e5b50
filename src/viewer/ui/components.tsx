/** Small building blocks every screen uses. Stored text is always rendered as text, never as markup. */
import type { ComponentChildren, JSX } from 'preact'
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { type ApiError, isAbort, toApiError } from './api.js'
import { fullTime, isWarningFlag, shortTime, showBidiControls } from './format.js'
import { navigate, routeHref, type Route } from './route.js'

/** An in-app link: a real `<a href>` (so it can be opened in a new tab) that navigates without reloading. */
export function Link(props: { to: Route; children: ComponentChildren; class?: string; testid?: string; label?: string }): JSX.Element {
  const onClick = (e: MouseEvent): void => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
    e.preventDefault()
    navigate(props.to)
  }
  return (
    <a href={routeHref(props.to)} onClick={onClick} class={props.class} data-testid={props.testid} aria-label={props.label}>
      {props.children}
    </a>
  )
}

/** An API failure: its message and, when the server gave one, its hint. */
export function ErrorBox(props: { error: ApiError | null; testid?: string }): JSX.Element | null {
  if (props.error === null) return null
  return (
    <div class="error" role="alert" data-testid={props.testid ?? 'error'}>
      <p class="error-message">
        <strong>Error:</strong> {props.error.message}
      </p>
      {props.error.hint !== null ? <p class="error-hint">{props.error.hint}</p> : null}
    </div>
  )
}

/** Flags of a text; injection and other suspect flags are warning badges. */
export function Flags(props: { flags: readonly string[] }): JSX.Element | null {
  if (props.flags.length === 0) return null
  return (
    <span class="flags">
      {props.flags.map((f) =>
        isWarningFlag(f) ? (
          <span
            key={f}
            class="badge badge-warn"
            data-testid="flag-warning"
            title="This text looks like an attempt to instruct the agent; treat it as data."
          >
            <span aria-hidden="true">⚠ </span>
            <span class="visually-hidden">Warning: </span>
            {f}
          </span>
        ) : (
          <span key={f} class="badge">
            {f}
          </span>
        ),
      )}
    </span>
  )
}

/** A kind badge: prompt, tool, error, decision, … */
export function KindBadge(props: { kind: string }): JSX.Element {
  return <span class={`badge kind kind-${props.kind.replace(/[^a-z_]/gi, '')}`}>{props.kind}</span>
}

/** A `<time>` with a short local label and the full time as its title. */
export function Time(props: { iso: string | null; full?: boolean }): JSX.Element {
  if (props.iso === null) return <span>—</span>
  return (
    <time dateTime={props.iso} title={fullTime(props.iso)}>
      {props.full ? fullTime(props.iso) : shortTime(props.iso)}
    </time>
  )
}

/** Long stored text, wrapped, as text. */
export function TextBlock(props: { text: string; testid?: string; label?: string }): JSX.Element {
  return (
    <figure class="text-block" aria-label={props.label}>
      <pre class="text" data-testid={props.testid}>
        {showBidiControls(props.text)}
      </pre>
    </figure>
  )
}

interface Loaded<T> {
  data: T | null
  error: ApiError | null
  loading: boolean
  reload: () => void
}

/**
 * Runs `load` when `key` changes (and on `reload()`), aborting the previous
 * run; keeps the last data while a new load runs.
 */
export function useLoad<T>(key: string | null, load: (signal: AbortSignal) => Promise<T>): Loaded<T> {
  const [data, setData] = useState<T | null>(null)
  const [error, setError] = useState<ApiError | null>(null)
  const [loading, setLoading] = useState(false)
  const [tick, setTick] = useState(0)
  const loadRef = useRef(load)
  loadRef.current = load
  useEffect(() => {
    if (key === null) {
      setData(null)
      setError(null)
      setLoading(false)
      return
    }
    const controller = new AbortController()
    setLoading(true)
    loadRef
      .current(controller.signal)
      .then((d) => {
        if (controller.signal.aborted) return
        setData(d)
        setError(null)
      })
      .catch((e: unknown) => {
        if (controller.signal.aborted || isAbort(e)) return
        setError(toApiError(e))
      })
      .finally(() => {
        if (!controller.signal.aborted) setLoading(false)
      })
    return () => controller.abort()
  }, [key, tick])
  return { data, error, loading, reload: () => setTick((t) => t + 1) }
}

/** The root font size in px (rows are sized in rem so they follow the user's font size). */
function remPx(): number {
  const v = parseFloat(getComputedStyle(document.documentElement).fontSize)
  return Number.isFinite(v) && v > 0 ? v : 16
}

/**
 * A long list that renders only the rows in view (plus a margin): rows have
 * one fixed height, `rowRem`. Screen readers get the position of each rendered
 * row in the whole list (aria-posinset/-setsize).
 */
export function WindowedList(props: {
  count: number
  rowRem: number
  label: string
  testid?: string
  /** Keeps this row in view when it changes. */
  scrollTo?: number
  renderRow: (index: number) => ComponentChildren
  rowClass?: (index: number) => string
}): JSX.Element {
  const ref = useRef<HTMLDivElement>(null)
  const [scrollTop, setScrollTop] = useState(0)
  const [viewport, setViewport] = useState(600)
  const rowPx = props.rowRem * remPx()
  const overscan = 8

  useEffect(() => {
    const el = ref.current
    if (!el) return
    const ro = new ResizeObserver(() => setViewport(el.clientHeight))
    ro.observe(el)
    setViewport(el.clientHeight)
    return () => ro.disconnect()
  }, [])

  useLayoutEffect(() => {
    const el = ref.current
    const i = props.scrollTo
    if (!el || i === undefined || i < 0) return
    const top = i * rowPx
    if (top < el.scrollTop) el.scrollTop = top
    else if (top + rowPx > el.scrollTop + el.clientHeight) el.scrollTop = top + rowPx - el.clientHeight
    setScrollTop(el.scrollTop)
  }, [props.scrollTo, props.count, rowPx])

  const first = Math.max(0, Math.floor(scrollTop / rowPx) - overscan)
  const last = Math.min(props.count, Math.ceil((scrollTop + viewport) / rowPx) + overscan)
  const rows: JSX.Element[] = []
  for (let i = first; i < last; i++) {
    rows.push(
      <li
        key={i}
        class={`wrow ${props.rowClass?.(i) ?? ''}`}
        style={{ top: `${i * rowPx}px`, height: `${rowPx}px` }}
        aria-posinset={i + 1}
        aria-setsize={props.count}
      >
        {props.renderRow(i)}
      </li>,
    )
  }
  return (
    <div class="window" ref={ref} onScroll={(e) => setScrollTop((e.currentTarget as HTMLDivElement).scrollTop)} data-testid={props.testid}>
      <ol class="wlist" aria-label={props.label} style={{ height: `${props.count * rowPx}px` }}>
        {rows}
      </ol>
    </div>
  )
}

/** "Loading…" while `loading`, as a polite status. */
export function Busy(props: { loading: boolean; what?: string }): JSX.Element | null {
  if (!props.loading) return null
  return (
    <p class="muted" role="status">
      Loading{props.what ? ` ${props.what}` : ''}…
    </p>
  )
}

/** A definition list of label → value pairs. */
export function Facts(props: { items: [string, ComponentChildren][]; testid?: string }): JSX.Element {
  return (
    <dl class="facts" data-testid={props.testid}>
      {props.items.map(([k, v]) => (
        <div key={k} class="fact">
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  )
}

/**
 * Previous / next buttons over a list paged `page` items at a time, with the range shown between them
 * (`11–20 of 57`, or `empty` when there is nothing, `Loading…` while the first page loads). Test ids are
 * `<testid>-prev`, `<testid>-range` and `<testid>-next`.
 */
export function Pager(props: {
  label: string
  testid: string
  offset: number
  page: number
  /** Items on the page shown. */
  shown: number
  total: number
  loading: boolean
  empty: string
  onOffset: (offset: number) => void
}): JSX.Element {
  const { offset, page, total, loading } = props
  return (
    <nav class="pager" aria-label={props.label}>
      <button
        type="button"
        class="button"
        disabled={offset === 0 || loading}
        onClick={() => props.onOffset(Math.max(0, offset - page))}
        data-testid={`${props.testid}-prev`}
      >
        Previous page
      </button>
      <span data-testid={`${props.testid}-range`}>
        {total === 0 ? (loading ? 'Loading…' : props.empty) : `${offset + 1}–${offset + props.shown} of ${total}`}
      </span>
      <button
        type="button"
        class="button"
        disabled={offset + page >= total || loading}
        onClick={() => props.onOffset(offset + page)}
        data-testid={`${props.testid}-next`}
      >
        Next page
      </button>
    </nav>
  )
}
