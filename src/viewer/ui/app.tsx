/** The viewer's shell: sign-in, the header with screens and project, the status region, the current screen. */
import type { JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, getToken, onUnauthorized, setToken } from './api.js'
import { onAnnounce } from './announce.js'
import { ErrorBox, Link, useLoad } from './components.js'
import { shortLabel, showBidiControls } from './format.js'
import { currentRoute, navigate, onRouteChange, type Route, type View } from './route.js'
import { CollectionsScreen } from './screens/collections.js'
import { ContextScreen } from './screens/context.js'
import { GraphScreen } from './screens/graph.js'
import { HealthScreen } from './screens/health.js'
import { LiveScreen } from './screens/live.js'
import { MemoriesScreen } from './screens/memories.js'
import { ReplayScreen } from './screens/replay.js'
import { SearchScreen } from './screens/search.js'
import { SessionsScreen } from './screens/sessions.js'
import { SignIn } from './sign-in.js'
import { effectiveTheme, setTheme, type Theme } from './theme.js'
import type { Status } from './types.js'

/** localStorage key of the selected project. */
const PROJECT_KEY = 'mnemo.project'

const TABS: { view: View; label: string }[] = [
  { view: 'live', label: 'Live' },
  { view: 'sessions', label: 'Sessions' },
  { view: 'search', label: 'Search' },
  { view: 'memories', label: 'Memories' },
  { view: 'collections', label: 'Collections' },
  { view: 'graph', label: 'Graph' },
  { view: 'context', label: 'Context' },
  { view: 'health', label: 'Health' },
]

/** The tab a view belongs to (a replay is part of Sessions). */
function tabOf(view: View): View {
  return view === 'replay' ? 'sessions' : view
}

export function App(): JSX.Element {
  const [signedIn, setSignedIn] = useState(getToken() !== null)
  const [refused, setRefused] = useState(false)
  useEffect(
    () =>
      onUnauthorized(() => {
        setToken(null)
        setRefused(true)
        setSignedIn(false)
      }),
    [],
  )
  if (!signedIn) {
    return (
      <SignIn
        refused={refused}
        onSignedIn={() => {
          setRefused(false)
          setSignedIn(true)
        }}
      />
    )
  }
  return (
    <Shell
      onSignOut={() => {
        setToken(null)
        setRefused(false)
        setSignedIn(false)
      }}
    />
  )
}

function storedProject(): string | null {
  try {
    return localStorage.getItem(PROJECT_KEY)
  } catch {
    return null
  }
}

function Shell(props: { onSignOut: () => void }): JSX.Element {
  const [route, setRoute] = useState<Route>(currentRoute())
  const [project, setProject] = useState<string | null>(storedProject())
  const [message, setMessage] = useState('')
  const status = useLoad<Status>('status', (signal) => api<Status>('/v1/status', { signal }))
  const projects = status.data?.projects.map((p) => p.name) ?? []

  useEffect(() => onRouteChange(setRoute), [])
  // Projects appear as agents work: the list is read again every 30 s (and on Health, every 10 s).
  useEffect(() => {
    const t = setInterval(() => status.reload(), 30_000)
    return () => clearInterval(t)
  }, [])
  useEffect(() => onAnnounce(setMessage), [])
  // An announcement fades after a while and on leaving the screen, so it never describes another one.
  useEffect(() => {
    if (message === '') return
    const t = setTimeout(() => setMessage(''), 8000)
    return () => clearTimeout(t)
  }, [message])
  useEffect(() => setMessage(''), [route.view])
  useEffect(() => {
    const tab = TABS.find((t) => t.view === tabOf(route.view))
    document.title = `${route.view === 'replay' ? 'Replay' : (tab?.label ?? 'mnemo')} · mnemo viewer`
  }, [route.view])
  // The remembered project, or the one with the latest activity (the server lists it first) when it is gone.
  useEffect(() => {
    if (status.data === null) return
    if (project !== null && projects.includes(project)) return
    setProject(projects[0] ?? null)
  }, [status.data])

  const chooseProject = (name: string): void => {
    setProject(name)
    try {
      localStorage.setItem(PROJECT_KEY, name)
    } catch {
      // Not remembered across reloads.
    }
  }
  const current = project !== null && (status.data === null || projects.includes(project)) ? project : null

  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <p class="brand">
          <span aria-hidden="true">◆</span> mnemo <span class="muted">viewer</span>
        </p>
        <nav aria-label="Screens" class="tabs">
          <ul>
            {TABS.map((t) => (
              <li key={t.view}>
                <a
                  href={`?view=${t.view}`}
                  aria-current={tabOf(route.view) === t.view ? 'page' : undefined}
                  data-testid={`nav-${t.view}`}
                  onClick={(e) => {
                    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
                    e.preventDefault()
                    if (route.view !== t.view) navigate({ view: t.view })
                  }}
                >
                  {t.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="tools">
          <label class="field inline">
            <span>Project</span>
            <select
              data-testid="project-select"
              value={current ?? ''}
              onChange={(e) => chooseProject((e.currentTarget as HTMLSelectElement).value)}
              disabled={projects.length === 0}
            >
              {projects.length === 0 ? <option value="">{status.loading ? 'Loading…' : 'No projects yet'}</option> : null}
              {projects.map((p) => (
                <option key={p} value={p}>
                  {shortLabel(showBidiControls(p), 60)}
                </option>
              ))}
            </select>
          </label>
          <ThemeToggle />
          <button type="button" class="button quiet" onClick={props.onSignOut} data-testid="sign-out">
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <ErrorBox error={status.error} />
        <Screen
          route={route}
          project={current}
          projectsLoaded={status.data !== null}
          home={status.data?.home}
          onStatus={status.reload}
          channels={status.data?.channels}
        />
      </main>
      <div class="statusbar" role="status" aria-live="polite" data-testid="status">
        {message}
      </div>
    </div>
  )
}

function ThemeToggle(): JSX.Element {
  const [theme, setThemeState] = useState<Theme>(effectiveTheme())
  useEffect(() => {
    const mq = matchMedia('(prefers-color-scheme: dark)')
    const onChange = (): void => setThemeState(effectiveTheme())
    mq.addEventListener('change', onChange)
    return () => mq.removeEventListener('change', onChange)
  }, [])
  const next: Theme = theme === 'dark' ? 'light' : 'dark'
  return (
    <button
      type="button"
      class="button quiet"
      data-testid="theme-toggle"
      aria-label={`Switch to ${next} theme`}
      title={`Switch to ${next} theme`}
      onClick={() => {
        setTheme(next)
        setThemeState(next)
      }}
    >
      <span aria-hidden="true">{theme === 'dark' ? '☀' : '☾'}</span> {next === 'dark' ? 'Dark' : 'Light'}
    </button>
  )
}

/** Shown on screens that need a project when there is none. */
function NoProject(props: { loaded: boolean; home: string | undefined }): JSX.Element {
  return (
    <section aria-labelledby="noproject-h">
      <h1 id="noproject-h">No project</h1>
      <p>
        {props.loaded
          ? `This store has no projects yet: they appear here as agents work. To try the viewer with a recorded session, run \`mnemo demo --home ${props.home ?? '<this data directory>'}\`.`
          : 'Loading the projects…'}
      </p>
      <p>
        <Link to={{ view: 'health' }}>See the store’s health</Link>
      </p>
    </section>
  )
}

function Screen(props: {
  route: Route
  project: string | null
  projectsLoaded: boolean
  home: string | undefined
  onStatus: () => void
  channels: Status['channels']
}): JSX.Element {
  const { route, project } = props
  if (route.view === 'health') return <HealthScreen onStatus={props.onStatus} />
  if (route.view === 'replay' && route.session !== undefined) return <ReplayScreen key={route.session} route={route} />
  if (route.view === 'memories' && project === null && route.memory !== undefined) return <MemoriesScreen project={null} route={route} />
  if (project === null) return <NoProject loaded={props.projectsLoaded} home={props.home} />
  switch (route.view) {
    case 'live':
      return <LiveScreen key={project} project={project} />
    case 'sessions':
    case 'replay':
      return <SessionsScreen key={project} project={project} />
    case 'search':
      return <SearchScreen key={project} project={project} route={route} channels={props.channels} />
    case 'memories':
      return <MemoriesScreen key={project} project={project} route={route} />
    case 'collections':
      return <CollectionsScreen key={project} project={project} route={route} />
    case 'graph':
      return <GraphScreen key={project} project={project} route={route} />
    case 'context':
      return <ContextScreen key={project} project={project} />
  }
}
