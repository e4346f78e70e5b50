/** Sessions: a project's sessions as a timeline, newest first, 50 at a time; each opens its replay. */
import type { JSX } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, type ApiError, isAbort, query, toApiError } from '../api.js'
import { Busy, ErrorBox, Link, Time } from '../components.js'
import { dayOf, humanDuration, oneLine } from '../format.js'
import { replayRoute } from '../route.js'
import type { Session, SessionList } from '../types.js'

const PAGE = 50

export function SessionsScreen(props: { project: string }): JSX.Element {
  const [sessions, setSessions] = useState<Session[]>([])
  const [total, setTotal] = useState<number | null>(null)
  const [more, setMore] = useState(true)
  const [loading, setLoading] = useState(false)
  const [error, setError] = useState<ApiError | null>(null)
  const controller = useRef<AbortController | null>(null)

  const load = (offset: number): void => {
    controller.current?.abort()
    const c = new AbortController()
    controller.current = c
    setLoading(true)
    api<SessionList>(`/v1/sessions${query({ project: props.project, limit: PAGE, offset })}`, { signal: c.signal })
      .then((r) => {
        setSessions((cur) => {
          const seen = new Set(cur.map((s) => s.id))
          return [...(offset === 0 ? [] : cur), ...r.sessions.filter((s) => offset === 0 || !seen.has(s.id))]
        })
        if (r.total !== undefined) setTotal(r.total)
        setMore(r.total !== undefined ? offset + r.sessions.length < r.total : r.sessions.length === PAGE)
        setError(null)
      })
      .catch((e: unknown) => {
        if (!isAbort(e)) setError(toApiError(e))
      })
      .finally(() => {
        if (controller.current === c) setLoading(false)
      })
  }

  useEffect(() => {
    load(0)
    return () => controller.current?.abort()
  }, [props.project])

  // Group by the local day each session started.
  const days: { day: string; items: Session[] }[] = []
  for (const s of sessions) {
    const day = dayOf(s.startedAt)
    const last = days[days.length - 1]
    if (last && last.day === day) last.items.push(s)
    else days.push({ day, items: [s] })
  }

  return (
    <section class="screen" aria-labelledby="sessions-h">
      <h1 id="sessions-h">Sessions</h1>
      <p class="muted" data-testid="sessions-count">
        {total !== null ? `${sessions.length} of ${total} sessions, newest first` : `${sessions.length} sessions, newest first`}
      </p>
      <ErrorBox error={error} />
      {days.map((d) => (
        <section key={d.day} class="day" aria-labelledby={`day-${d.day}`}>
          <h2 id={`day-${d.day}`} class="day-h">
            <time dateTime={d.day}>{d.day}</time>
          </h2>
          <ol class="timeline">
            {d.items.map((s) => (
              <li key={s.id} class="timeline-item" data-testid="session-row">
                <Link to={replayRoute(s.id)} class="timeline-link">
                  <span class="timeline-title">{oneLine(s.title ?? s.sessionKey, 160)}</span>
                </Link>
                <span class="timeline-meta">
                  <Time iso={s.startedAt} /> · {humanDuration(Date.parse(s.lastEventAt) - Date.parse(s.startedAt))} · {s.agent} ·{' '}
                  {s.observations} step
                  {s.observations === 1 ? '' : 's'}
                  {s.endedAt === null ? (
                    <>
                      {' '}
                      <span class="badge badge-info">open</span>
                    </>
                  ) : null}
                </span>
              </li>
            ))}
          </ol>
        </section>
      ))}
      {!loading && sessions.length === 0 && error === null ? <p>No sessions in this project yet.</p> : null}
      <Busy loading={loading} what="sessions" />
      {more && sessions.length > 0 ? (
        <button type="button" class="button" onClick={() => load(sessions.length)} disabled={loading} data-testid="sessions-more">
          Load more sessions
        </button>
      ) : null}
    </section>
  )
}
