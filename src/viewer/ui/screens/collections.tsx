/**
 * Collections: a project's typed fact collections (docs/FACTS.md): each one's schema (fields with types and example
 * values, identity key, time field, record count), its records by state (current, retracted, superseded versions,
 * deleted) sorted by a field and paged, and a record's bitemporal history with what each version changed, its
 * provenance (the observation it came from, in the session replay) and, for entity-attribute facts, what depends on it.
 */
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, query } from '../api.js'
import { Busy, ErrorBox, Facts, Link, Pager, Time, useLoad } from '../components.js'
import { factValueText, fieldTypeText, isUncertain, msIso, provenanceText, STATE_COLLECTION, versionChanges } from '../facts.js'
import { oneLine } from '../format.js'
import { replayRoute, type Route } from '../route.js'
import {
  FACT_LIST_STATES,
  type FactCollection,
  type FactList,
  type FactListState,
  type FactRecord,
  type FactSchema,
  type FactShow,
  type FactState,
} from '../types.js'

const PAGE = 25
/** Most fields shown as columns of the records table (every field is in a record's detail). */
const MAX_COLUMNS = 6
/** A record id as a table shows it: its last 8 characters (the whole id is its title and in the detail). */
function shortId(id: string): string {
  return id.length > 12 ? `…${id.slice(-8)}` : id
}

const STATE_LABELS: Record<FactListState, string> = {
  current: 'Current',
  retracted: 'Retracted',
  superseded: 'Superseded versions',
  deleted: 'Deleted',
}

export function CollectionsScreen(props: { project: string; route: Route }): JSX.Element {
  const schema = useLoad<FactSchema>(props.project, (signal) =>
    api<FactSchema>(`/v1/facts/schema${query({ project: props.project })}`, { signal }),
  )
  const collections = schema.data?.collections ?? []
  const name = props.route.collection ?? collections[0]?.name
  const selected = collections.find((c) => c.name === name) ?? null

  return (
    <section class="screen" aria-labelledby="collections-h">
      <h1 id="collections-h">Collections</h1>
      <ErrorBox error={schema.error} />
      <Busy loading={schema.loading && schema.data === null} what="the collections" />
      {schema.data !== null && collections.length === 0 ? (
        <p class="muted" data-testid="collections-empty">
          No fact collections in this project yet. Record typed facts with <code>mnemo facts add &lt;collection&gt; '&lt;json&gt;'</code>,
          an import, the MCP tools or REST; the agent's own activity appears here as it works.
        </p>
      ) : null}
      {collections.length > 0 ? (
        <table class="table" data-testid="collections-table">
          <caption>The project's typed fact collections</caption>
          <thead>
            <tr>
              <th scope="col">Collection</th>
              <th scope="col" class="num">
                Records
              </th>
              <th scope="col">Fields</th>
              <th scope="col">Identity key</th>
              <th scope="col">Time range</th>
            </tr>
          </thead>
          <tbody>
            {collections.map((c) => (
              <tr key={c.name} class={c.name === selected?.name ? 'selected' : ''} data-testid="collection-row">
                <th scope="row">
                  {c.name === selected?.name ? (
                    <span aria-current="true">
                      <code>{c.name}</code>
                    </span>
                  ) : (
                    <Link to={{ view: 'collections', collection: c.name }}>
                      <code>{c.name}</code>
                    </Link>
                  )}
                </th>
                <td class="num">{c.records.toLocaleString('en-US')}</td>
                <td>{oneLine(c.fields.map((f) => f.name).join(', '), 80)}</td>
                <td>{c.identity.length > 0 ? c.identity.join(' + ') : <span class="muted">none</span>}</td>
                <td>{c.from !== undefined ? `${c.from.slice(0, 10)} – ${(c.to ?? c.from).slice(0, 10)}` : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {selected !== null ? (
        <CollectionView key={selected.name} project={props.project} collection={selected} recordId={props.route.record ?? null} />
      ) : props.route.collection !== undefined && schema.data !== null ? (
        <p class="muted">
          No collection <code>{props.route.collection}</code> in this project.
        </p>
      ) : null}
    </section>
  )
}

function CollectionView(props: { project: string; collection: FactCollection; recordId: string | null }): JSX.Element {
  const c = props.collection
  const [state, setState] = useState<FactListState>('current')
  const [sort, setSort] = useState('')
  const [order, setOrder] = useState<'asc' | 'desc'>('desc')
  const [offset, setOffset] = useState(0)
  const key = JSON.stringify([props.project, c.name, state, sort, order, offset])
  const list = useLoad<FactList>(key, (signal) =>
    api<FactList>(
      `/v1/facts/collections/${encodeURIComponent(c.name)}/records${query({ project: props.project, state, sort, order, offset, limit: PAGE })}`,
      { signal },
    ),
  )
  const columns = c.fields.slice(0, MAX_COLUMNS)
  // Lists and booleans have no order to sort by (the server refuses them, as the query language's "order by" does).
  const sortable = c.fields.filter((f) => f.type !== 'list' && f.type !== 'boolean')
  const rows = list.data?.records ?? []
  const deleted = list.data?.deleted ?? []
  const shown = state === 'deleted' ? deleted.length : rows.length
  const total = list.data?.total ?? 0
  const change =
    <T,>(set: (v: T) => void) =>
    (e: Event): void => {
      set((e.currentTarget as HTMLSelectElement).value as T)
      setOffset(0)
    }
  const recordRoute = (id: string): Route => ({ view: 'collections', collection: c.name, record: id })

  return (
    <>
      <section aria-labelledby="schema-h" data-testid="collection-schema">
        <h2 id="schema-h" class="sub">
          <code>{c.name}</code>: schema
        </h2>
        {c.description !== undefined ? <p>{c.description}</p> : null}
        <table class="table" data-testid="schema-fields">
          <caption>Fields, their types and example values (of {c.records.toLocaleString('en-US')} current records)</caption>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Type</th>
              <th scope="col">Examples</th>
            </tr>
          </thead>
          <tbody>
            {c.fields.map((f) => (
              <tr key={f.name}>
                <th scope="row">
                  <code>{f.name}</code>
                  {c.identity.includes(f.name) ? <span class="badge badge-info">identity</span> : null}
                  {f.name === c.timeField ? <span class="badge">time</span> : null}
                </th>
                <td>{fieldTypeText(f)}</td>
                <td class="wrap">
                  {(c.examples[f.name] ?? []).length === 0 ? (
                    <span class="muted">—</span>
                  ) : (
                    oneLine((c.examples[f.name] ?? []).map((v) => factValueText(v, f)).join(' · '), 160)
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section aria-labelledby="records-h">
        <h2 id="records-h" class="sub">
          Records
        </h2>
        <fieldset class="toolbar" aria-label="Which records">
          <label class="field inline">
            <span>State</span>
            <select value={state} onChange={change(setState)} data-testid="facts-state">
              {FACT_LIST_STATES.map((s) => (
                <option key={s} value={s}>
                  {STATE_LABELS[s]}
                </option>
              ))}
            </select>
          </label>
          <label class="field inline">
            <span>Sort by</span>
            <select value={sort} onChange={change(setSort)} data-testid="facts-sort" disabled={state === 'deleted'}>
              <option value="">Record time</option>
              {sortable.map((f) => (
                <option key={f.name} value={f.name}>
                  {f.name}
                </option>
              ))}
            </select>
          </label>
          <label class="field inline">
            <span>Order</span>
            <select value={order} onChange={change(setOrder)} data-testid="facts-order" disabled={state === 'deleted'}>
              <option value="desc">Descending</option>
              <option value="asc">Ascending</option>
            </select>
          </label>
        </fieldset>
        <ErrorBox error={list.error} />
        <div class="split">
          <div class="split-main">
            <Pager
              label="Record pages"
              testid="facts"
              offset={offset}
              page={PAGE}
              shown={shown}
              total={total}
              loading={list.loading}
              empty={`No ${STATE_LABELS[state].toLowerCase()} records`}
              onOffset={setOffset}
            />
            <section
              class="table-scroll"
              // biome-ignore lint/a11y/noNoninteractiveTabindex: the table scrolls sideways (overflow: auto), so it takes focus for keyboard scrolling
              tabIndex={0}
              aria-label={`Records of ${c.name}`}
            >
              {state === 'deleted' ? (
                <table class="table" data-testid="facts-records" aria-busy={list.loading}>
                  <thead>
                    <tr>
                      <th scope="col">Record</th>
                      <th scope="col">Deleted</th>
                    </tr>
                  </thead>
                  <tbody>
                    {deleted.map((d) => (
                      <tr key={d.id} data-testid="fact-row">
                        <th scope="row">
                          <Link to={recordRoute(d.id)} testid="fact-link">
                            <code>{d.id}</code>
                          </Link>
                        </th>
                        <td>{d.text}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              ) : (
                <table class="table records" data-testid="facts-records" aria-busy={list.loading}>
                  <thead>
                    <tr>
                      <th scope="col">Record</th>
                      {columns.map((f) => (
                        <th
                          key={f.name}
                          scope="col"
                          aria-sort={sort === f.name ? (order === 'asc' ? 'ascending' : 'descending') : undefined}
                        >
                          {f.name}
                        </th>
                      ))}
                      <th scope="col">Status</th>
                      <th scope="col" aria-sort={sort === '' ? (order === 'asc' ? 'ascending' : 'descending') : undefined}>
                        Recorded
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((r) => (
                      <tr
                        key={`${r.id}@${r.version}`}
                        class={r.id === props.recordId ? 'selected' : ''}
                        data-testid="fact-row"
                        aria-current={r.id === props.recordId ? 'true' : undefined}
                      >
                        <th scope="row">
                          <Link to={recordRoute(r.id)} testid="fact-link">
                            <code title={r.id}>{shortId(r.id)}</code>
                          </Link>
                          {state === 'superseded' ? <span class="badge">v{r.version}</span> : null}
                        </th>
                        {columns.map((f) => (
                          <td key={f.name}>{oneLine(factValueText(r.values[f.name], f), 48)}</td>
                        ))}
                        <td>
                          <span class="badge">{r.status}</span>
                          {isUncertain(r) ? (
                            <span class="badge badge-warn" data-testid="fact-uncertain">
                              uncertain
                            </span>
                          ) : null}
                        </td>
                        <td>
                          <Time iso={msIso(r.recordedAt)} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </section>
          </div>
          <section
            class="split-side"
            // biome-ignore lint/a11y/noNoninteractiveTabindex: the side pane scrolls (overflow: auto), so it takes focus for keyboard scrolling
            tabIndex={0}
            aria-label="Selected record"
          >
            {props.recordId !== null ? (
              <RecordDetail
                key={props.recordId}
                project={props.project}
                collection={c}
                id={props.recordId}
                row={rows.find((r) => r.id === props.recordId)}
              />
            ) : (
              <p class="muted">Select a record to see its values, provenance and history.</p>
            )}
          </section>
        </div>
      </section>
    </>
  )
}

/** A link to the observation a record came from, in its session's replay. */
function ProvenanceLink(props: { record: FactRecord }): JSX.Element | null {
  const p = props.record.provenance
  if (p.observation === undefined || p.session === undefined) return null
  return (
    <Link to={replayRoute(p.session, { obs: p.observation })} testid="fact-provenance-link">
      Open observation <code>{p.observation}</code> in session replay
    </Link>
  )
}

function Values(props: { collection: FactCollection; record: FactRecord }): JSX.Element {
  const r = props.record
  return (
    <Facts
      testid="fact-values"
      items={props.collection.fields.map((f): [string, JSX.Element | string] => [f.name, factValueText(r.values[f.name], f)])}
    />
  )
}

function RecordDetail(props: { project: string; collection: FactCollection; id: string; row: FactRecord | undefined }): JSX.Element {
  const c = props.collection
  // An activity record is its observation (obs_…, a file touch obs_…#n): derived from the event log, one version.
  const derived = props.row?.provenance.source === 'activity' || props.id.startsWith('obs_')
  const shown = useLoad<FactShow>(derived ? null : props.id, (signal) =>
    api<FactShow>(`/v1/facts/records/${encodeURIComponent(props.id)}${query({ project: props.project })}`, { signal }),
  )
  if (derived) {
    return (
      <article class="item" data-testid="fact-detail" aria-labelledby="fact-detail-h">
        <h2 id="fact-detail-h" class="item-title">
          Record <code>{props.id}</code> <span class="badge">derived</span>
        </h2>
        <p class="muted">Derived from the event log (the agent's own activity): rebuilt with it, never edited, one version.</p>
        {props.row !== undefined ? (
          <>
            <Values collection={c} record={props.row} />
            <ProvenanceLink record={props.row} />
          </>
        ) : (
          <p class="muted">Select the record in the list to see its values.</p>
        )}
      </article>
    )
  }
  const s = shown.data
  if (s === null) {
    return (
      <div>
        <Busy loading={shown.loading} what="the record" />
        <ErrorBox error={shown.error} />
      </div>
    )
  }
  if ('deleted' in s) {
    return (
      <article class="item" data-testid="fact-detail" aria-labelledby="fact-detail-h">
        <h2 id="fact-detail-h" class="item-title">
          Record <code>{s.deleted.id}</code> <span class="badge">deleted</span>
        </h2>
        <p data-testid="fact-deleted">{s.deleted.text}: its values left every view, index and export.</p>
      </article>
    )
  }
  const r = s.record
  const latest = s.history.at(-1)
  return (
    <article class="item" data-testid="fact-detail" aria-labelledby="fact-detail-h">
      <h2 id="fact-detail-h" class="item-title">
        Record <code>{r.id}</code> <span class="badge">{r.status}</span>
        {r.retractedAt !== undefined ? <span class="badge">retracted</span> : <span class="badge badge-info">current</span>}
        {isUncertain(r) ? (
          <span class="badge badge-warn" data-testid="fact-uncertain">
            uncertain
          </span>
        ) : null}
      </h2>
      <Values collection={c} record={r} />
      <Facts
        testid="fact-times"
        items={[
          ['Version', `${r.version} of ${s.history.length}`],
          ['Valid from', r.validFrom !== undefined ? <Time iso={msIso(r.validFrom)} full /> : 'not stated'],
          ['Valid to', r.validTo !== undefined ? <Time iso={msIso(r.validTo)} full /> : 'still holds'],
          ['Recorded', <Time iso={msIso(r.recordedAt)} full />],
          ['Source', provenanceText(r.provenance)],
        ]}
      />
      <ProvenanceLink record={r} />
      {c.name === STATE_COLLECTION && typeof r.values['key'] === 'string' ? (
        <DependentState project={props.project} stateKey={r.values['key']} />
      ) : null}
      <section aria-labelledby="fact-history-h">
        <h3 id="fact-history-h" class="sub">
          History
        </h3>
        <ol class="chain" data-testid="fact-history">
          {s.history.map((v, i) => (
            <li key={v.version} class={v === latest ? 'this' : ''} data-testid="fact-version">
              <span class="row-top">
                <span class="badge">v{v.version}</span>
                <span class="badge">{v.action}</span>
                {v.supersededAt === undefined ? <span class="badge badge-info">latest</span> : null}
                <span class="muted">
                  {v.validFrom === undefined && v.validTo === undefined ? (
                    'valid time not stated'
                  ) : (
                    <>
                      valid {v.validFrom !== undefined ? <Time iso={msIso(v.validFrom)} /> : '—'} →{' '}
                      {v.validTo !== undefined ? <Time iso={msIso(v.validTo)} /> : 'now'}
                    </>
                  )}
                </span>
              </span>
              <span class="line muted">
                recorded <Time iso={msIso(v.recordedAt)} />
                {v.supersededAt !== undefined ? (
                  <>
                    , replaced <Time iso={msIso(v.supersededAt)} />
                  </>
                ) : null}
              </span>
              <ul class="changes" data-testid="fact-changes">
                {versionChanges(s.history[i - 1], v, c.fields).map((line) => (
                  <li key={line}>{line}</li>
                ))}
              </ul>
            </li>
          ))}
        </ol>
      </section>
    </article>
  )
}

/** An entity-attribute fact's answer as the dependency rules leave it, and the facts that depend on it. */
function DependentState(props: { project: string; stateKey: string }): JSX.Element {
  const state = useLoad<FactState>(props.stateKey, (signal) =>
    api<FactState>(`/v1/facts/state/${encodeURIComponent(props.stateKey)}${query({ project: props.project })}`, { signal }),
  )
  const d = state.data
  return (
    <section aria-labelledby="fact-state-h" data-testid="fact-state">
      <h3 id="fact-state-h" class="sub">
        Answer and dependants
      </h3>
      <ErrorBox error={state.error} />
      {d !== null ? (
        <>
          <p data-testid="fact-state-text">{d.answer.text}</p>
          {d.dependants.length === 0 ? (
            <p class="muted">Nothing depends on it.</p>
          ) : (
            <ul class="sources" data-testid="fact-dependants">
              {d.dependants.map((x) => (
                <li key={x.key}>
                  <span class="row-top">
                    <code>{x.key}</code>
                    <span class={x.status === 'uncertain' ? 'badge badge-warn' : 'badge'}>{x.status}</span>
                    <span class="muted">
                      via {x.via} ({x.effect})
                    </span>
                  </span>
                  <span class="line">{x.text}</span>
                </li>
              ))}
            </ul>
          )}
        </>
      ) : null}
    </section>
  )
}
