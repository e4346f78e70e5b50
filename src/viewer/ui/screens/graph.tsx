/** Graph: the entities around one (files, people, concepts), drawn and listed, with the texts that mention it. */
import type { JSX } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, query } from '../api.js'
import { Busy, ErrorBox, useLoad } from '../components.js'
import { shortLabel } from '../format.js'
import { edgeWeight, layoutGraph } from '../graph-layout.js'
import { navigate, type Route } from '../route.js'
import type { GraphResult } from '../types.js'
import { HitRow } from './search.js'

export function GraphScreen(props: { project: string; route: Route }): JSX.Element {
  const entity = props.route.entity ?? ''
  const [text, setText] = useState(entity)
  const [open, setOpen] = useState<Set<string>>(new Set())
  useEffect(() => {
    setText(entity)
    setOpen(new Set())
  }, [entity])
  const graph = useLoad<GraphResult>(JSON.stringify([props.project, entity]), (signal) =>
    api<GraphResult>(`/v1/graph${query({ project: props.project, entity, limit: 30 })}`, { signal }),
  )
  const summary = useRef<HTMLParagraphElement>(null)
  const focusSummary = useRef(false)
  const recentre = (name: string): void => {
    // The button pressed is about to go: focus moves to the summary of the new graph.
    focusSummary.current = true
    navigate(name === '' ? { view: 'graph' } : { view: 'graph', entity: name })
  }
  useEffect(() => {
    if (graph.data === null || !focusSummary.current) return
    focusSummary.current = false
    summary.current?.focus()
  }, [graph.data])
  const g = graph.data
  const layout = g === null ? null : layoutGraph(g.center, g.nodes, g.edges)
  const neighbours = g === null ? [] : g.nodes.filter((n) => g.center === null || n.id !== g.center.id)

  return (
    <section class="screen" aria-labelledby="graph-h">
      <h1 id="graph-h">Graph</h1>
      <search aria-label="Entity">
        <form
          class="searchform"
          onSubmit={(e) => {
            e.preventDefault()
            recentre(text.trim())
          }}
        >
          <div class="field grow">
            <label for="graph-entity">Entity</label>
            <input
              id="graph-entity"
              type="search"
              value={text}
              placeholder="a file path, a person, a concept"
              onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
              data-testid="graph-entity"
            />
          </div>
          <button type="submit" class="button primary" data-testid="graph-submit">
            Show
          </button>
          {entity !== '' ? (
            <button type="button" class="button" onClick={() => recentre('')} data-testid="graph-top">
              Top entities
            </button>
          ) : null}
        </form>
      </search>
      <ErrorBox error={graph.error} />
      <Busy loading={graph.loading} what="the graph" />
      {g !== null && layout !== null ? (
        <>
          <p class="muted" data-testid="graph-summary" tabIndex={-1} ref={summary}>
            {g.center !== null
              ? `“${g.center.name}” (${g.center.type}) and ${neighbours.length} related entities`
              : entity !== ''
                ? `No entity named “${entity}”; showing nothing.`
                : `The ${g.nodes.length} most mentioned entities`}
          </p>
          {g.nodes.length > 0 ? (
            <div class="graph-wrap">
              <svg
                class="graph"
                viewBox={`0 0 ${layout.width} ${layout.height}`}
                role="img"
                aria-labelledby="graph-svg-title"
                data-testid="graph-svg"
              >
                <title id="graph-svg-title">
                  {g.center !== null ? `Entities related to ${g.center.name}` : 'Most mentioned entities'}; the table below lists the same.
                </title>
                <g class="edges">
                  {layout.edges.map((e, i) => (
                    <line
                      key={i}
                      class={e.spoke || g.center === null ? 'spoke' : ''}
                      x1={e.from.x}
                      y1={e.from.y}
                      x2={e.to.x}
                      y2={e.to.y}
                      stroke-width={e.spoke || g.center === null ? e.width : Math.min(2, e.width)}
                    />
                  ))}
                </g>
                <g class="nodes">
                  {layout.nodes.map((n) => (
                    // biome-ignore lint/a11y/noStaticElementInteractions: a click on a node is the mouse's shortcut; the table below has a link per entity for the keyboard
                    <g key={n.entity.id} class={n.isCenter ? 'node center' : 'node'} onClick={() => recentre(n.entity.name)}>
                      <title>{`${n.entity.name} (${n.entity.type}, ${n.entity.docs} mentions)`}</title>
                      <circle cx={n.x} cy={n.y} r={n.r} class={`t-${n.entity.type.replace(/[^a-z]/gi, '')}`} />
                      <text x={n.labelX} y={n.labelY} text-anchor={n.anchor}>
                        {shortLabel(n.entity.name, n.isCenter ? 40 : 22)}
                      </text>
                    </g>
                  ))}
                </g>
              </svg>
            </div>
          ) : null}
          {neighbours.length > 0 ? (
            <table class="table" data-testid="graph-table">
              <caption>
                {g.center !== null ? `Related to “${g.center.name}”` : 'Most mentioned entities'}; choose one to put it in the centre
              </caption>
              <thead>
                <tr>
                  <th scope="col">Entity</th>
                  <th scope="col">Type</th>
                  <th scope="col" class="num">
                    Mentions
                  </th>
                  {g.center !== null ? (
                    <th scope="col" class="num">
                      Co-mentions
                    </th>
                  ) : null}
                </tr>
              </thead>
              <tbody>
                {neighbours.map((n) => (
                  <tr key={n.id}>
                    <th scope="row">
                      <button type="button" class="linklike" onClick={() => recentre(n.name)} data-testid="graph-node">
                        {n.name}
                      </button>
                    </th>
                    <td>{n.type}</td>
                    <td class="num">{n.docs}</td>
                    {g.center !== null ? <td class="num">{edgeWeight(g.edges, g.center.id, n.id)}</td> : null}
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
          {g.center !== null ? (
            <section aria-labelledby="mentions-h">
              <h2 id="mentions-h" class="sub">
                Mentions of “{g.center.name}” ({g.mentions.length})
              </h2>
              <ol class="hits">
                {g.mentions.map((m, i) => (
                  <HitRow
                    key={m.id}
                    hit={m}
                    n={i + 1}
                    testid="mention-row"
                    open={open.has(m.id)}
                    onToggle={() =>
                      setOpen((cur) => {
                        const next = new Set(cur)
                        if (next.has(m.id)) next.delete(m.id)
                        else next.add(m.id)
                        return next
                      })
                    }
                  />
                ))}
              </ol>
            </section>
          ) : null}
        </>
      ) : null}
    </section>
  )
}
