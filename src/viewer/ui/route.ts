/**
 * The viewer's address: which screen and what it shows, kept in the query
 * string (`?view=replay&session=ses_…&step=12`) so back/forward and reloads work.
 */

const VIEWS = ['live', 'sessions', 'replay', 'search', 'memories', 'collections', 'graph', 'context', 'health'] as const
export type View = (typeof VIEWS)[number]

export interface Route {
  view: View
  /** Replay: the session. */
  session?: string
  /** Replay: the 0-based step. */
  step?: number
  /** Replay: the observation to open at (its step is looked up). */
  obs?: string
  /** Memories: the selected memory. */
  memory?: string
  /** Graph: the entity in the centre. */
  entity?: string
  /** Search: the query. */
  q?: string
  /** Collections: the selected collection. */
  collection?: string
  /** Collections: the selected record (fct_… or, in an activity collection, an observation id). */
  record?: string
}

/** Reads a route from a query string (`location.search`); unknown views fall back to live. */
export function parseRoute(search: string): Route {
  const p = new URLSearchParams(search)
  const v = p.get('view')
  const view: View = (VIEWS as readonly string[]).includes(v ?? '') ? (v as View) : 'live'
  const route: Route = { view }
  const str = (k: 'session' | 'obs' | 'memory' | 'entity' | 'q' | 'collection' | 'record'): void => {
    const val = p.get(k)
    if (val !== null && val !== '') route[k] = val
  }
  str('session')
  str('obs')
  str('memory')
  str('entity')
  str('q')
  str('collection')
  str('record')
  const step = Number(p.get('step'))
  if (p.has('step') && Number.isInteger(step) && step >= 0) route.step = step
  return route
}

/** The query string of a route (`?view=…&…`). */
export function routeHref(route: Route): string {
  const p = new URLSearchParams()
  p.set('view', route.view)
  if (route.session !== undefined) p.set('session', route.session)
  if (route.step !== undefined) p.set('step', String(route.step))
  if (route.obs !== undefined) p.set('obs', route.obs)
  if (route.memory !== undefined) p.set('memory', route.memory)
  if (route.entity !== undefined) p.set('entity', route.entity)
  if (route.q !== undefined) p.set('q', route.q)
  if (route.collection !== undefined) p.set('collection', route.collection)
  if (route.record !== undefined) p.set('record', route.record)
  return `?${p.toString()}`
}

const listeners = new Set<(r: Route) => void>()

/** The route of the current address. */
export function currentRoute(): Route {
  return parseRoute(location.search)
}

/** Goes to `route`: a new history entry, or replacing the current one. */
export function navigate(route: Route, options: { replace?: boolean } = {}): void {
  const href = routeHref(route)
  if (options.replace) history.replaceState(null, '', href)
  else history.pushState(null, '', href)
  for (const l of listeners) l(route)
}

/** Calls `listener` on every navigation, back/forward included; returns the unsubscribe. */
export function onRouteChange(listener: (r: Route) => void): () => void {
  listeners.add(listener)
  const pop = (): void => listener(currentRoute())
  window.addEventListener('popstate', pop)
  return () => {
    listeners.delete(listener)
    window.removeEventListener('popstate', pop)
  }
}

/** Links to the replay of a session, at a step or an observation. */
export function replayRoute(session: string, at?: { step?: number; obs?: string }): Route {
  return {
    view: 'replay',
    session,
    ...(at?.step !== undefined ? { step: at.step } : {}),
    ...(at?.obs !== undefined ? { obs: at.obs } : {}),
  }
}
