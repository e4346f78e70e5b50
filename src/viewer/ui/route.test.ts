import { describe, expect, it } from 'vitest'
import { parseRoute, replayRoute, routeHref } from './route.js'

describe('route', () => {
  it('round-trips through the query string', () => {
    const r = { view: 'replay' as const, session: 'ses_1', step: 12, obs: 'obs_2' }
    expect(parseRoute(routeHref(r))).toEqual(r)
    expect(parseRoute(routeHref({ view: 'search', q: 'a b&c' }))).toEqual({ view: 'search', q: 'a b&c' })
    const c = { view: 'collections' as const, collection: 'trips', record: 'fct_1' }
    expect(parseRoute(routeHref(c))).toEqual(c)
  })

  it('falls back to live for an unknown view and ignores a bad step', () => {
    expect(parseRoute('?view=nope')).toEqual({ view: 'live' })
    expect(parseRoute('?view=replay&session=ses_1&step=-3')).toEqual({ view: 'replay', session: 'ses_1' })
    expect(parseRoute('')).toEqual({ view: 'live' })
  })

  it('replayRoute names the session and, when given, the step or observation', () => {
    expect(replayRoute('ses_1')).toEqual({ view: 'replay', session: 'ses_1' })
    expect(replayRoute('ses_1', { obs: 'obs_9' })).toEqual({ view: 'replay', session: 'ses_1', obs: 'obs_9' })
  })
})
