/** Context: the block a new session of the project would get, within a token budget. */
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, query } from '../api.js'
import { Busy, ErrorBox, Link, TextBlock, useLoad } from '../components.js'
import { humanCount } from '../format.js'
import { replayRoute } from '../route.js'
import type { ContextBlock } from '../types.js'

const MIN_BUDGET = 200
const MAX_BUDGET = 100_000

export function ContextScreen(props: { project: string }): JSX.Element {
  const [budgetText, setBudgetText] = useState('')
  const [budget, setBudget] = useState<number | null>(null)
  const block = useLoad<ContextBlock>(JSON.stringify([props.project, budget]), (signal) =>
    api<ContextBlock>(`/v1/context${query({ project: props.project, budget })}`, { signal }),
  )
  const c = block.data

  return (
    <section class="screen" aria-labelledby="context-h">
      <h1 id="context-h">Context</h1>
      <p class="muted">What the next session in this project is given at start, as the agent sees it.</p>
      <form
        class="searchform"
        aria-label="Budget"
        onSubmit={(e) => {
          e.preventDefault()
          const n = Math.round(Number(budgetText))
          const next = budgetText.trim() === '' || !Number.isFinite(n) ? null : Math.min(MAX_BUDGET, Math.max(MIN_BUDGET, n))
          if (next === budget) block.reload()
          else setBudget(next)
        }}
      >
        <div class="field narrow">
          <label for="context-budget">Budget (tokens)</label>
          <input
            id="context-budget"
            type="number"
            min={MIN_BUDGET}
            max={MAX_BUDGET}
            step={100}
            placeholder={c !== null ? String(c.budgetTokens) : 'default'}
            value={budgetText}
            onInput={(e) => setBudgetText((e.currentTarget as HTMLInputElement).value)}
            data-testid="context-budget"
          />
        </div>
        <button type="submit" class="button primary" data-testid="context-submit">
          Build block
        </button>
      </form>
      <ErrorBox error={block.error} />
      <Busy loading={block.loading} what="the context block" />
      {c !== null ? (
        <>
          <p data-testid="context-tokens">
            <strong>{humanCount(c.tokens)}</strong> of {humanCount(c.budgetTokens)} tokens
            {c.omitted > 0 ? ` · ${c.omitted} item${c.omitted === 1 ? '' : 's'} left out for the budget` : ''}
          </p>
          <TextBlock text={c.text} testid="context-text" label="Context block" />
          <div class="split even">
            <section aria-labelledby="ctx-mem-h">
              <h2 id="ctx-mem-h" class="sub">
                Memories included ({c.memoryIds.length})
              </h2>
              <ul class="idlist" data-testid="context-memories">
                {c.memoryIds.map((id) => (
                  <li key={id}>
                    <Link to={{ view: 'memories', memory: id }}>{id}</Link>
                  </li>
                ))}
              </ul>
            </section>
            <section aria-labelledby="ctx-ses-h">
              <h2 id="ctx-ses-h" class="sub">
                Sessions included ({c.sessionIds.length})
              </h2>
              <ul class="idlist">
                {c.sessionIds.map((id) => (
                  <li key={id}>
                    <Link to={replayRoute(id)}>{id}</Link>
                  </li>
                ))}
              </ul>
            </section>
          </div>
        </>
      ) : null}
    </section>
  )
}
