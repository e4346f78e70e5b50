/** Health: what the store holds, the capture spool, recent failures and background jobs; refreshed every 10 s while shown. */
import type { JSX } from 'preact'
import { useEffect } from 'preact/hooks'
import { api } from '../api.js'
import { Busy, ErrorBox, Facts, Time, useLoad } from '../components.js'
import { humanBytes, humanCount } from '../format.js'
import type { Status } from '../types.js'

/** Refresh period of the Health screen. */
const HEALTH_REFRESH_MS = 10_000

export function HealthScreen(props: { onStatus?: () => void }): JSX.Element {
  const status = useLoad<Status>('health', (signal) => api<Status>('/v1/status', { signal }))
  useEffect(() => {
    const tick = (): void => {
      if (document.visibilityState === 'visible') status.reload()
    }
    const timer = setInterval(tick, HEALTH_REFRESH_MS)
    document.addEventListener('visibilitychange', tick)
    return () => {
      clearInterval(timer)
      document.removeEventListener('visibilitychange', tick)
    }
  }, [])
  // The project list in the header follows new projects.
  useEffect(() => {
    if (status.data !== null) props.onStatus?.()
  }, [status.data?.counts.projects])

  const s = status.data
  return (
    <section class="screen" aria-labelledby="health-h">
      <h1 id="health-h">Health</h1>
      <ErrorBox error={status.error} />
      <Busy loading={status.loading && s === null} what="the status" />
      {s !== null ? (
        <>
          <div class="cards" data-testid="health-counts">
            <Count label="Events" value={s.counts.events} />
            <Count label="Projects" value={s.counts.projects} />
            <Count label="Sessions" value={s.counts.sessions} />
            <Count label="Observations" value={s.counts.observations} />
            <Count label="Memories" value={s.counts.memories} />
            <div class="card">
              <span class="card-label">Store size</span>
              <span class="card-value" data-testid="health-bytes">
                {humanBytes(s.bytes)}
              </span>
            </div>
          </div>
          <Facts
            testid="health-facts"
            items={[
              ['Last capture', <Time iso={s.lastCaptureAt} full />],
              ['Spool', <span data-testid="health-spool">{`${s.spool.pending} pending, ${s.spool.bad} bad`}</span>],
              ['Data directory', <code class="wrap">{s.home}</code>],
              ['Database', <code class="wrap">{s.database}</code>],
              ['Server', `mnemo ${s.server.version}, pid ${s.server.pid}`],
              ['Up since', <Time iso={s.server.startedAt} full />],
            ]}
          />
          <section aria-labelledby="errors-h">
            <h2 id="errors-h" class="sub">
              Recent errors
            </h2>
            {s.errors.length === 0 ? (
              <p class="muted">None.</p>
            ) : (
              <table class="table" data-testid="health-errors">
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Where</th>
                    <th scope="col">Code</th>
                    <th scope="col">Message</th>
                  </tr>
                </thead>
                <tbody>
                  {s.errors.map((e, i) => (
                    <tr key={i}>
                      <td>
                        <Time iso={e.at} full />
                      </td>
                      <td>{e.where}</td>
                      <td>
                        <code>{e.code}</code>
                      </td>
                      <td class="wrap">{e.message}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
          <section aria-labelledby="jobs-h">
            <h2 id="jobs-h" class="sub">
              Background jobs
            </h2>
            {s.jobs === undefined || s.jobs.length === 0 ? (
              <p class="muted">No scheduled jobs.</p>
            ) : (
              <table class="table" data-testid="health-jobs">
                <thead>
                  <tr>
                    <th scope="col">Job</th>
                    <th scope="col">Every</th>
                    <th scope="col">Last run</th>
                    <th scope="col">Next run</th>
                    <th scope="col">Result</th>
                  </tr>
                </thead>
                <tbody>
                  {s.jobs.map((j) => (
                    <tr key={j.name}>
                      <th scope="row">{j.name}</th>
                      <td>{j.everyMinutes} min</td>
                      <td>{j.running ? <span class="badge badge-info">running</span> : <Time iso={j.lastRunAt} />}</td>
                      <td>
                        <Time iso={j.nextRunAt} />
                      </td>
                      <td class="wrap">
                        {j.lastError !== null ? <span class="badge badge-warn">failed: {j.lastError}</span> : (j.lastResult ?? '—')}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
          <section aria-labelledby="projects-h">
            <h2 id="projects-h" class="sub">
              Projects
            </h2>
            <ul class="idlist">
              {s.projects.map((p) => (
                <li key={p.name}>
                  <strong>{p.name}</strong> <code class="muted wrap">{p.root}</code>
                </li>
              ))}
            </ul>
          </section>
        </>
      ) : null}
    </section>
  )
}

function Count(props: { label: string; value: number }): JSX.Element {
  return (
    <div class="card">
      <span class="card-label">{props.label}</span>
      <span class="card-value" data-testid={`health-${props.label.toLowerCase()}`}>
        {humanCount(props.value)}
      </span>
    </div>
  )
}
