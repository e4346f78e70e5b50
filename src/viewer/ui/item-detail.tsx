/** Full views of one observation or memory, shared by Live, Search, Graph and Replay. */
import type { JSX } from 'preact'
import { api } from './api.js'
import { Busy, ErrorBox, Facts, Flags, KindBadge, Link, TextBlock, Time, useLoad } from './components.js'
import { idType, isWarningFlag, roleTool } from './format.js'
import { replayRoute } from './route.js'
import type { Memory, Observation } from './types.js'

/** An observation in full: its text, files, flags, and where it came from. */
export function ObservationView(props: { obs: Observation; headingLevel?: 2 | 3 | 4 | 5; showReplayLink?: boolean }): JSX.Element {
  const o = props.obs
  const level = props.headingLevel ?? 3
  const H = `h${level}` as 'h3'
  const Sub = `h${level + 1}` as 'h4'
  return (
    <article class="item" data-testid="observation-detail" aria-label={`Observation ${o.id}`}>
      <H class="item-title">
        <KindBadge kind={o.kind} /> {roleTool(o.role, o.tool)} <Flags flags={o.flags} />
      </H>
      <Facts
        items={[
          ['Time', <Time iso={o.time} full />],
          ['Id', <code>{o.id}</code>],
          ...(o.agent ? ([['Agent', o.agent]] as [string, string][]) : []),
          ...(o.project !== null ? ([['Project', o.project]] as [string, string][]) : []),
          [
            'Session',
            props.showReplayLink === false ? (
              <code>{o.sessionId}</code>
            ) : (
              <Link to={replayRoute(o.sessionId, { obs: o.id })} testid="replay-link">
                Open in session replay
              </Link>
            ),
          ],
          ...(o.sourceRef !== null ? ([['Source', <code class="wrap">{o.sourceRef}</code>]] as [string, JSX.Element][]) : []),
        ]}
      />
      {o.files.length > 0 ? (
        <div>
          <Sub class="sub">Files</Sub>
          <ul class="files">
            {o.files.map((f) => (
              <li key={f}>
                <code class="wrap">{f}</code>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <FlagNote flags={o.flags} />
      <TextBlock text={o.text} testid="observation-text" label="Text" />
    </article>
  )
}

/** A memory in brief: its text, kind, state, and a link to it in the Memories screen. */
function MemoryBrief(props: { mem: Memory; headingLevel?: 3 | 4 }): JSX.Element {
  const m = props.mem
  const H = `h${props.headingLevel ?? 3}` as 'h3'
  return (
    <article class="item" data-testid="memory-brief" aria-label={`Memory ${m.id}`}>
      <H class="item-title">
        <KindBadge kind={m.kind} /> memory <MemoryStateBadges mem={m} /> <Flags flags={m.flags} />
      </H>
      <Facts
        items={[
          ['Valid from', <Time iso={m.validFrom} full />],
          [
            'Id',
            <Link to={{ view: 'memories', memory: m.id }} testid="memory-link">
              {m.id}
            </Link>,
          ],
          ['Sources', m.sources.length === 0 ? 'none' : m.sources.map((s) => <code key={s}>{s} </code>)],
        ]}
      />
      <FlagNote flags={m.flags} />
      <TextBlock text={m.text} testid="memory-text" label="Text" />
    </article>
  )
}

/** A warning above flagged text: it reads like instructions to an agent and is shown only as data. */
export function FlagNote(props: { flags: readonly string[] }): JSX.Element | null {
  if (!props.flags.some(isWarningFlag)) return null
  return (
    <p class="flag-note" data-testid="flag-note">
      <span aria-hidden="true">⚠ </span>This text reads like instructions aimed at an AI agent (a possible prompt injection). It is shown as
      plain data.
    </p>
  )
}

/** Badges for a memory's state: pinned, archived, superseded, needs review. */
export function MemoryStateBadges(props: { mem: Memory }): JSX.Element {
  const m = props.mem
  return (
    <span class="flags">
      {m.pinned ? <span class="badge badge-info">pinned</span> : null}
      {m.archivedAt !== null ? <span class="badge">archived</span> : null}
      {m.supersededBy !== null || m.validTo !== null ? <span class="badge">superseded</span> : null}
      {m.review !== null ? <span class="badge badge-warn">review</span> : null}
    </span>
  )
}

/** Fetches an observation or memory by id (by its prefix) and shows it in full. */
export function ItemDetail(props: { id: string }): JSX.Element {
  const type = idType(props.id)
  const loaded = useLoad<Observation | Memory>(props.id, (signal) =>
    type === 'memory'
      ? api<Memory>(`/v1/memories/${encodeURIComponent(props.id)}`, { signal })
      : api<Observation>(`/v1/observations/${encodeURIComponent(props.id)}`, { signal }),
  )
  if (type !== 'memory' && type !== 'observation') return <p class="muted">Unknown id {props.id}</p>
  return (
    <div class="detail-inline">
      <Busy loading={loaded.loading && loaded.data === null} />
      <ErrorBox error={loaded.error} />
      {loaded.data !== null ? (
        type === 'memory' ? (
          <MemoryBrief mem={loaded.data as Memory} headingLevel={3} />
        ) : (
          <ObservationView obs={loaded.data as Observation} headingLevel={3} />
        )
      ) : null}
    </div>
  )
}
