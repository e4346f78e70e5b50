/** Memories: browse a project's memories by tier, kind and state; inspect, pin, archive, edit or delete one. */
import type { JSX } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, type ApiError, query, toApiError } from '../api.js'
import { announce } from '../announce.js'
import { Busy, ErrorBox, Facts, Flags, KindBadge, Link, Pager, TextBlock, Time, useLoad } from '../components.js'
import { oneLine } from '../format.js'
import { FlagNote, MemoryStateBadges } from '../item-detail.js'
import { navigate, replayRoute, type Route } from '../route.js'
import { MEMORY_KINDS, type Forgotten, type Memory, type MemoryHistory, type MemoryList } from '../types.js'

const PAGE = 50
/** Longest memory text the server takes (MAX_INPUT_TEXT_CHARS). */
const MAX_MEMORY_CHARS = 16_000
const TIERS = [
  ['all', 'All tiers'],
  ['semantic', 'Semantic'],
  ['episodic', 'Episodic'],
  ['procedural', 'Procedural'],
] as const
const STATES = [
  ['current', 'Current'],
  ['archived', 'Archived'],
  ['superseded', 'Superseded'],
  ['all', 'All states'],
] as const

export function MemoriesScreen(props: { project: string | null; route: Route }): JSX.Element {
  const [tier, setTier] = useState('all')
  const [kind, setKind] = useState('')
  const [state, setState] = useState('current')
  const [offset, setOffset] = useState(0)
  const selectedId = props.route.memory ?? null
  const listKey = props.project === null ? null : JSON.stringify([props.project, tier, kind, state, offset])
  const list = useLoad<MemoryList>(listKey, (signal) =>
    api<MemoryList>(
      `/v1/memories${query({ project: props.project, tier: tier === 'all' ? undefined : tier, kind, state, offset, limit: PAGE })}`,
      { signal },
    ),
  )
  const select = (id: string | null): void => navigate(id === null ? { view: 'memories' } : { view: 'memories', memory: id })
  const setFilter = (f: (v: string) => void) => (e: Event) => {
    f((e.currentTarget as HTMLSelectElement).value)
    setOffset(0)
  }
  const total = list.data?.total ?? 0
  const memories = list.data?.memories ?? []

  return (
    <section class="screen" aria-labelledby="memories-h">
      <h1 id="memories-h">Memories</h1>
      {props.project !== null ? (
        <>
          <fieldset class="toolbar" aria-label="Filters">
            <label class="field inline">
              <span>Tier</span>
              <select value={tier} onChange={setFilter(setTier)} data-testid="memories-tier">
                {TIERS.map(([v, l]) => (
                  <option key={v} value={v}>
                    {l}
                  </option>
                ))}
              </select>
            </label>
            <label class="field inline">
              <span>Kind</span>
              <select value={kind} onChange={setFilter(setKind)} data-testid="memories-kind">
                <option value="">All kinds</option>
                {MEMORY_KINDS.map((k) => (
                  <option key={k} value={k}>
                    {k}
                  </option>
                ))}
              </select>
            </label>
            <label class="field inline">
              <span>State</span>
              <select value={state} onChange={setFilter(setState)} data-testid="memories-state">
                {STATES.map(([v, l]) => (
                  <option key={v} value={v}>
                    {l}
                  </option>
                ))}
              </select>
            </label>
          </fieldset>
          <ErrorBox error={list.error} />
        </>
      ) : null}
      <div class="split">
        {props.project !== null ? (
          <div class="split-main">
            <Pager
              label="Memory pages"
              testid="memories"
              offset={offset}
              page={PAGE}
              shown={memories.length}
              total={total}
              loading={list.loading}
              empty="No memories"
              onOffset={setOffset}
            />
            <ul class="rows" aria-label="Memories" aria-busy={list.loading}>
              {memories.map((m) => (
                <li key={m.id} class={m.id === selectedId ? 'selected' : ''}>
                  <button
                    type="button"
                    class="row-button tall"
                    aria-current={m.id === selectedId ? 'true' : undefined}
                    onClick={() => select(m.id)}
                    data-testid="memory-row"
                  >
                    <span class="row-top">
                      <KindBadge kind={m.kind} />
                      <MemoryStateBadges mem={m} />
                      <Flags flags={m.flags} />
                      <span class="muted">
                        <Time iso={m.validFrom} />
                      </span>
                    </span>
                    <span class="cell line">{oneLine(m.text, 200)}</span>
                  </button>
                </li>
              ))}
            </ul>
          </div>
        ) : null}
        <section
          class="split-side"
          // biome-ignore lint/a11y/noNoninteractiveTabindex: the side pane scrolls (overflow: auto), so it takes focus for keyboard scrolling
          tabIndex={0}
          aria-label="Selected memory"
        >
          {selectedId !== null ? (
            <MemoryDetail key={selectedId} id={selectedId} onChanged={list.reload} onSelect={select} />
          ) : (
            <p class="muted">Select a memory to see its history and provenance.</p>
          )}
        </section>
      </div>
    </section>
  )
}

function MemoryDetail(props: { id: string; onChanged: () => void; onSelect: (id: string | null) => void }): JSX.Element {
  const mem = useLoad<Memory>(props.id, (signal) => api<Memory>(`/v1/memories/${encodeURIComponent(props.id)}`, { signal }))
  const history = useLoad<MemoryHistory>(props.id, (signal) =>
    api<MemoryHistory>(`/v1/memories/${encodeURIComponent(props.id)}/history`, { signal }),
  )
  const [editing, setEditing] = useState(false)
  const [draft, setDraft] = useState('')
  const [busy, setBusy] = useState(false)
  const [actionError, setActionError] = useState<ApiError | null>(null)
  const dialog = useRef<HTMLDialogElement>(null)
  const editBox = useRef<HTMLTextAreaElement>(null)

  useEffect(() => {
    if (editing) editBox.current?.focus()
  }, [editing])

  const m = mem.data
  const act = async (what: string, body: Record<string, unknown>, done: (m: Memory) => string): Promise<boolean> => {
    setBusy(true)
    setActionError(null)
    try {
      const r = await api<{ memory: Memory }>(`/v1/memories/${encodeURIComponent(props.id)}`, { method: 'PATCH', body })
      const message = done(r.memory)
      props.onChanged()
      if (r.memory.id !== props.id) props.onSelect(r.memory.id)
      else {
        mem.reload()
        history.reload()
      }
      announce(message)
      return true
    } catch (e) {
      const err = toApiError(e)
      setActionError(err)
      announce(`${what} failed: ${err.message}`)
      return false
    } finally {
      setBusy(false)
    }
  }

  const remove = async (): Promise<void> => {
    dialog.current?.close()
    setBusy(true)
    setActionError(null)
    try {
      // A delete names the project the memory is in (REST refuses an id of another project).
      const r = await api<Forgotten>(`/v1/memories/${encodeURIComponent(props.id)}?project=${encodeURIComponent(m?.project ?? '')}`, {
        method: 'DELETE',
      })
      props.onChanged()
      props.onSelect(null)
      announce(`Deleted memory ${r.forgotten.id}`)
    } catch (e) {
      const err = toApiError(e)
      setActionError(err)
      announce(`Delete failed: ${err.message}`)
    } finally {
      setBusy(false)
    }
  }

  if (m === null) {
    return (
      <div>
        <Busy loading={mem.loading} what="the memory" />
        <ErrorBox error={mem.error} />
      </div>
    )
  }
  const isCurrent = m.validTo === null && m.supersededBy === null
  return (
    <article class="item" data-testid="memory-detail" aria-labelledby="memory-detail-h">
      <h2 id="memory-detail-h" class="item-title">
        <KindBadge kind={m.kind} /> Memory <code>{m.id}</code> <MemoryStateBadges mem={m} /> <Flags flags={m.flags} />
      </h2>
      <fieldset class="actions" aria-label="Memory actions">
        <button
          type="button"
          class="button"
          disabled={busy}
          onClick={() =>
            void act(m.pinned ? 'Unpin' : 'Pin', { pinned: !m.pinned }, () => (m.pinned ? `Unpinned ${m.id}` : `Pinned ${m.id}`))
          }
          data-testid="memory-pin"
        >
          {m.pinned ? 'Unpin' : 'Pin'}
        </button>
        <button
          type="button"
          class="button"
          disabled={busy}
          onClick={() =>
            void act(m.archivedAt !== null ? 'Restore' : 'Archive', { archived: m.archivedAt === null }, () =>
              m.archivedAt !== null ? `Restored ${m.id}` : `Archived ${m.id}`,
            )
          }
          data-testid="memory-archive"
        >
          {m.archivedAt !== null ? 'Restore' : 'Archive'}
        </button>
        <button
          type="button"
          class="button"
          disabled={busy || editing || !editable(m)}
          title={
            editable(m)
              ? undefined
              : m.validTo !== null
                ? 'An older version: edit the current one'
                : 'Consolidation maintains this memory; it cannot be edited by hand'
          }
          onClick={() => {
            setDraft(m.text)
            setEditing(true)
          }}
          data-testid="memory-edit"
        >
          Edit
        </button>
        <button type="button" class="button danger" disabled={busy} onClick={() => dialog.current?.showModal()} data-testid="memory-delete">
          Delete
        </button>
      </fieldset>
      <ErrorBox error={actionError} testid="memory-action-error" />
      {editing ? (
        <form
          class="edit"
          onSubmit={(e) => {
            e.preventDefault()
            if (draft.trim() === '' || draft === m.text || draft.length > MAX_MEMORY_CHARS) return
            void act('Save', { text: draft }, (n) => `Saved a new version ${n.id}, which supersedes ${m.id}`).then(
              (ok) => ok && setEditing(false),
            )
          }}
        >
          <label for="memory-edit-text">Memory text</label>
          <textarea
            id="memory-edit-text"
            ref={editBox}
            rows={8}
            value={draft}
            onInput={(e) => setDraft((e.currentTarget as HTMLTextAreaElement).value)}
            data-testid="memory-edit-text"
            aria-describedby="memory-edit-count"
            aria-invalid={draft.length > MAX_MEMORY_CHARS}
          />
          {/* No maxLength: a paste over the limit would be cut silently; it is refused, saying so. */}
          <p id="memory-edit-count" class={draft.length > MAX_MEMORY_CHARS ? 'hint warn' : 'hint'} data-testid="memory-edit-count">
            {draft.length > MAX_MEMORY_CHARS
              ? `${draft.length.toLocaleString('en')} characters: at most ${MAX_MEMORY_CHARS.toLocaleString('en')}; shorten it to save.`
              : 'Saving stores a new version that supersedes this one; this one stays in the history.'}
          </p>
          <div class="actions">
            <button
              type="submit"
              class="button primary"
              disabled={busy || draft.trim() === '' || draft === m.text || draft.length > MAX_MEMORY_CHARS}
              data-testid="memory-save"
            >
              Save new version
            </button>
            <button type="button" class="button" onClick={() => setEditing(false)} data-testid="memory-cancel">
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <>
          <FlagNote flags={m.flags} />
          <TextBlock text={m.text} testid="memory-text" label="Memory text" />
        </>
      )}
      <Facts
        testid="memory-facts"
        items={[
          ['Kind', m.kind],
          ['State', isCurrent ? (m.archivedAt !== null ? 'archived' : 'current') : 'superseded'],
          ['Created', <Time iso={m.createdAt} full />],
          ['Valid from', <Time iso={m.validFrom} full />],
          ['Valid to', m.validTo === null ? 'still valid' : <Time iso={m.validTo} full />],
          ['Pinned', m.pinned ? 'yes' : 'no'],
          ['Archived', m.archivedAt === null ? 'no' : <Time iso={m.archivedAt} full />],
          ['Seen', `${m.seenCount} time${m.seenCount === 1 ? '' : 's'}`],
          [
            'Confidence',
            m.confidence === null
              ? m.kind === 'summary' || m.kind === 'procedure'
                ? 'checked against its sources'
                : 'stated'
              : `${Math.round(m.confidence * 100)}% (derived)`,
          ],
          ['Review', m.review ?? 'none'],
          ['Project', m.project ?? m.projectId],
        ]}
      />
      <section aria-labelledby="chain-h">
        <h3 id="chain-h" class="sub">
          Versions
        </h3>
        <ErrorBox error={history.error} />
        <Busy loading={history.loading && history.data === null} what="the history" />
        {history.data !== null ? (
          <ol class="chain" data-testid="memory-chain">
            {history.data.chain.map((v) => (
              <li key={v.id} class={v.id === m.id ? 'this' : ''} aria-current={v.id === m.id ? 'true' : undefined}>
                <span class="row-top">
                  {v.id === m.id ? <code>{v.id}</code> : <Link to={{ view: 'memories', memory: v.id }}>{v.id}</Link>}
                  {v.validTo === null && v.supersededBy === null ? (
                    <span class="badge badge-info">current</span>
                  ) : (
                    <span class="badge">superseded</span>
                  )}
                  {v.id === m.id ? <span class="badge">this version</span> : null}
                  <span class="muted">
                    <Time iso={v.validFrom} /> → {v.validTo === null ? 'now' : <Time iso={v.validTo} />}
                  </span>
                </span>
                <span class="line">{oneLine(v.text, 160)}</span>
              </li>
            ))}
          </ol>
        ) : null}
      </section>
      <section aria-labelledby="prov-h">
        <h3 id="prov-h" class="sub">
          Provenance
        </h3>
        {history.data !== null ? (
          history.data.sources.length === 0 ? (
            <p class="muted">No source observations (stated directly, or its sources were forgotten).</p>
          ) : (
            <ul class="sources" data-testid="memory-sources">
              {history.data.sources.map((o) => (
                <li key={o.id}>
                  <span class="row-top">
                    <KindBadge kind={o.kind} />
                    <Time iso={o.time} />
                    <Flags flags={o.flags} />
                    <Link to={replayRoute(o.sessionId, { obs: o.id })} testid="source-replay-link">
                      Open in session replay
                    </Link>
                  </span>
                  <span class="line">{oneLine(o.text, 240)}</span>
                </li>
              ))}
            </ul>
          )
        ) : null}
      </section>
      <dialog ref={dialog} class="confirm" aria-labelledby="confirm-h" data-testid="memory-delete-dialog">
        <div>
          <h2 id="confirm-h">Delete this memory?</h2>
          <p>
            <code>{m.id}</code> is forgotten: removed from the store and from every index. This cannot be undone.
          </p>
          <div class="actions">
            <button type="button" class="button danger" onClick={() => void remove()} data-testid="memory-delete-confirm">
              Delete
            </button>
            {/* biome-ignore lint/a11y/noAutofocus: the delete dialog opens with the focus on its safe choice, Cancel (WAI-ARIA APG, alert dialog) */}
            <button type="button" class="button" onClick={() => dialog.current?.close()} autoFocus data-testid="memory-delete-cancel">
              Cancel
            </button>
          </div>
        </div>
      </dialog>
    </article>
  )
}

/** Only the current version of a fact, decision, preference or lesson is corrected by hand; summaries and procedures are rewritten by consolidation. */
function editable(m: Memory): boolean {
  return m.validTo === null && m.kind !== 'summary' && m.kind !== 'procedure'
}
