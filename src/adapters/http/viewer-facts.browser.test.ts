import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { chromium, type Browser, type Locator, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ParsedJson } from '../../testing/json.js'
import { startServer, type RunningServer } from './server.js'

// The viewer's Collections screen in a real browser: Debian's headless Chromium driven by playwright-core against
// `mnemo serve` on loopback, over a store with typed facts recorded through REST and the library (an update, a
// retract, a delete, a record extracted from an observation, dependent facts made uncertain by a rule, the agent's
// own tool calls). Checks the schema, the records by state, sort and page, a record's history with what changed,
// provenance into the session replay, the uncertain state, and axe-core in both themes. Its screenshot goes to
// artifacts/viewer/collections.png (docs/screenshots/ with UPDATE_SCREENSHOTS=1, which the README links).
//
// Skipped — and says so — when there is no Chromium (MNEMO_CHROMIUM, else /usr/bin/chromium) or no built viewer.
const ROOT = path.resolve(import.meta.dirname, '../../..')
const CHROMIUM = process.env['MNEMO_CHROMIUM'] ?? '/usr/bin/chromium'
const BUILT = path.join(ROOT, 'dist/viewer/app.js')
const ARTIFACTS = path.join(ROOT, 'artifacts/viewer')
const SCREENSHOTS = path.join(ROOT, 'docs/screenshots')
const missing = !existsSync(CHROMIUM)
  ? `no Chromium at ${CHROMIUM} (apt install chromium, or set MNEMO_CHROMIUM)`
  : !existsSync(BUILT)
    ? `no built viewer at ${BUILT} (npm run build)`
    : undefined
if (missing) console.warn(`viewer Collections browser tests skipped: ${missing}`)

const CWD = '/home/demo/acme-api'
const P = 'acme-api'
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

let tmp: string
let server: RunningServer
let browser: Browser
let page: Page
const problems: string[] = []
const ids: Record<string, string> = {}
let promptObs: { id: string; sessionId: string }

async function api(method: string, route: string, body?: unknown): Promise<ParsedJson> {
  const res = await fetch(`${server.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${server.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`)
  return res.json()
}

async function hook(event: string, fields: Record<string, unknown>): Promise<void> {
  await api('POST', '/v1/events', { event, payload: { session_id: 'facts-demo-1', cwd: CWD, hook_event_name: event, ...fields } })
}

/** The text of each cell of a column (by header) of the records table. */
async function column(header: string): Promise<string[]> {
  const table = page.getByTestId('facts-records')
  const headers = await table.locator('thead th').allTextContents()
  const i = headers.indexOf(header)
  if (i < 0) throw new Error(`no column ${header} in ${headers.join(', ')}`)
  return table.locator(`tbody tr > :nth-child(${i + 1})`).allTextContents()
}

const rows = (): Locator => page.getByTestId('fact-row')
/** The link to a record in the records table. */
const recordLink = (id: string): Locator => page.getByTestId('facts-records').locator(`a[href$="record=${id}"]`)
/** The row with a cell holding exactly `value`. */
const rowWith = (value: string): Locator => rows().filter({ has: page.getByRole('cell', { name: value, exact: true }) })

/** Opens a collection from the table (a fresh view: state current, newest first), or by its address when it is the one shown. */
async function openCollection(name: string): Promise<void> {
  const link = page.getByTestId('collections-table').getByRole('link', { name, exact: true })
  if ((await link.count()) === 1) await link.click()
  else await page.goto(`${server.url}/?view=collections&collection=${name}`)
  await expect.poll(() => page.getByTestId('collection-schema').locator('h2').textContent()).toBe(`${name}: schema`)
}

describe.skipIf(missing !== undefined)('the Collections screen in headless Chromium', () => {
  beforeAll(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'mnemo-viewer-facts-'))
    mkdirSync(ARTIFACTS, { recursive: true })
    if (process.env['UPDATE_SCREENSHOTS'] === '1') mkdirSync(SCREENSHOTS, { recursive: true })
    server = await startServer({ home: path.join(tmp, 'home'), host: '127.0.0.1', port: 0, env: {}, consolidateEveryMinutes: 0 })
    // A session: the prompt a record is extracted from, and two tool calls (the agent's own activity).
    await hook('UserPromptSubmit', { prompt: 'book the Sydney flight, QF50 on 2024-11-20, fare 700' })
    await hook('PostToolUse', {
      tool_name: 'Bash',
      tool_use_id: 'tu_1',
      tool_input: { command: 'npx vitest run' },
      tool_response: { stdout: 'Tests  3 passed (3)', stderr: '', interrupted: false },
    })
    await hook('PostToolUse', {
      tool_name: 'Bash',
      tool_use_id: 'tu_2',
      tool_input: { command: 'git status' },
      tool_response: { stdout: 'clean', stderr: '', interrupted: false },
    })
    const observations = (await api('GET', `/v1/observations?project=${P}`)).observations as {
      id: string
      kind: string
      sessionId: string
    }[]
    promptObs = observations.find((o) => o.kind === 'prompt')!

    await api('POST', '/v1/facts/collections', {
      project: CWD,
      collection: {
        name: 'flights',
        description: 'Flights booked for the team.',
        fields: [
          { name: 'code', type: 'string' },
          { name: 'day', type: 'date' },
          { name: 'to', type: 'string' },
          { name: 'fare', type: 'money' },
          { name: 'tags', type: 'list', items: 'string' },
        ],
        identity: ['code'],
        timeField: 'day',
      },
    })
    const added = await api('POST', '/v1/facts/records', {
      project: CWD,
      collection: 'flights',
      records: [
        { code: 'NH10', day: '2024-03-01', to: 'Tokyo', fare: 820, tags: ['work'] },
        { code: 'LA20', day: '2024-05-09', to: 'Lima', fare: 1290.5, tags: ['work', 'andes'] },
        { code: 'BA30', day: '2024-07-15', to: 'London', fare: 410, tags: [] },
        { code: 'AF40', day: '2024-09-02', to: 'Paris', fare: 515, tags: ['leisure'] },
      ],
    })
    ;[ids['tokyo'], ids['lima'], ids['london'], ids['paris']] = added.records.map((r: { id: string }) => r.id)
    await api('PATCH', `/v1/facts/records/${ids['tokyo']}`, { project: CWD, values: { fare: 905 } })
    const project = await server.engine.projectForWrite(CWD)
    await server.engine.facts.retract(ids['london']!, { project })
    await api('DELETE', `/v1/facts/records/${ids['paris']}?project=${P}`)
    const extracted = await server.engine.facts.add(
      'flights',
      { code: 'QF50', day: '2024-11-20', to: 'Sydney', fare: 700, tags: ['work'] },
      {
        project,
        provenance: { source: 'extraction', observation: promptObs.id, session: promptObs.sessionId, quote: 'QF50 on 2024-11-20' },
      },
    )
    ids['sydney'] = extracted.records[0]!.id
    // 30 readings: more than one page.
    await api('POST', '/v1/facts/records', {
      project: CWD,
      collection: 'readings',
      records: Array.from({ length: 30 }, (_, i) => ({ n: i + 1, at: `2024-01-${String(i + 1).padStart(2, '0')}` })),
    })
    // A dependent fact: the release owner depended on the team lead, who changed.
    await api('POST', '/v1/facts/state/team_lead', { project: CWD, value: 'Mina' })
    await api('POST', '/v1/facts/state/release_owner', { project: CWD, value: 'Mina' })
    await server.engine.facts.dependencies.addRule({ source: 'team_lead', target: 'release_owner', effect: 'uncertain' }, { project })
    await api('POST', '/v1/facts/state/team_lead', { project: CWD, value: 'Jihoon' })

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-background-networking'] })
    page = await browser.newPage({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' })
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`)
    })
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`${r.status()} ${r.request().method()} ${r.url()}`)
    })
    await page.goto(server.viewerUrl)
    await page.getByTestId('project-select').locator(`option[value="${P}"]`).waitFor({ state: 'attached' })
    await page.getByTestId('nav-collections').click()
  })

  afterAll(async () => {
    await browser?.close()
    await server?.close()
    if (tmp) rmSync(tmp, { recursive: true, force: true })
  })

  it('lists the collections with counts, and a collection’s schema with types, identity and example values', async () => {
    const table = page.getByTestId('collections-table')
    await expect.poll(() => table.getByTestId('collection-row').count()).toBeGreaterThan(3)
    const summary = await table
      .getByTestId('collection-row')
      .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent?.trim() ?? '').join(' | ')))
    // Paris was deleted and London retracted: 3 current flights.
    expect(summary).toContain('flights | 3 | code, day, to, fare, tags | code | 2024-03-01 – 2024-11-20')
    expect(summary).toContain('readings | 30 | n, at | none | 2024-01-01 – 2024-01-30')
    expect(summary.some((s) => s.startsWith('tool_calls | 2 |'))).toBe(true)
    expect(summary.some((s) => s.startsWith('entity_state | 2 |'))).toBe(true)

    await openCollection('flights')
    const schema = page.getByTestId('collection-schema')
    expect(await schema.textContent()).toContain('Flights booked for the team.')
    const fields = await page
      .getByTestId('schema-fields')
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent?.trim() ?? '').join(' | ')))
    // Example values of the current records (in record-time order, which the same millisecond may tie: sorted here).
    const sorted = fields.map((f) => {
      const [field, type, examples] = f.split(' | ')
      return `${field} | ${type} | ${examples?.split(' · ').sort().join(' · ')}`
    })
    expect(sorted).toEqual([
      'codeidentity | string | LA20 · NH10 · QF50',
      'daytime | date | 2024-03-01 · 2024-05-09 · 2024-11-20',
      'to | string | Lima · Sydney · Tokyo',
      'fare | money (USD) | 1,290.5 USD · 700 USD · 905 USD',
      'tags | list of string | andes · work',
    ])
    expect(await page.getByTestId('schema-fields').locator('caption').textContent()).toBe(
      'Fields, their types and example values (of 3 current records)',
    )
  })

  it('shows records by state, sorted by a field, paged', async () => {
    await openCollection('flights')
    // Default: by record time, newest first (the column says so to assistive technology).
    await expect.poll(async () => (await column('to')).sort()).toEqual(['Lima', 'Sydney', 'Tokyo'])
    expect(await page.getByTestId('facts-records').locator('th[aria-sort]').allTextContents()).toEqual(['Recorded'])
    await page.getByTestId('facts-sort').selectOption('fare')
    await expect.poll(() => column('fare')).toEqual(['1,290.5 USD', '905 USD', '700 USD'])
    expect(await page.getByTestId('facts-records').locator('th[aria-sort="descending"]').allTextContents()).toEqual(['fare'])
    expect(await page.getByTestId('facts-range').textContent()).toBe('1–3 of 3')
    await page.getByTestId('facts-order').selectOption('asc')
    await expect.poll(() => column('to')).toEqual(['Sydney', 'Tokyo', 'Lima'])
    expect(await column('tags')).toEqual(['work', 'work', 'work, andes'])

    await page.getByTestId('facts-state').selectOption('superseded')
    await page.getByTestId('facts-sort').selectOption('to')
    await expect.poll(() => column('to')).toEqual(['London', 'Tokyo'])
    expect(await column('fare')).toEqual(['410 USD', '820 USD'])
    expect(await column('Record')).toEqual([expect.stringContaining('v1'), expect.stringContaining('v1')])
    await page.getByTestId('facts-state').selectOption('retracted')
    await expect.poll(() => column('to')).toEqual(['London'])
    await page.getByTestId('facts-state').selectOption('deleted')
    await expect.poll(() => rows().count()).toBe(1)
    const gone = (await rows().first().textContent()) ?? ''
    expect(gone).toContain(ids['paris'])
    expect(gone).toMatch(/you asked me to forget that on \d{4}-\d{2}-\d{2}/)
    expect(await page.getByTestId('facts-records').textContent()).not.toContain('Paris')
    await page.getByTestId('facts-state').selectOption('current')

    await openCollection('readings')
    await page.getByTestId('facts-sort').selectOption('n')
    await page.getByTestId('facts-order').selectOption('asc')
    await expect.poll(() => page.getByTestId('facts-range').textContent()).toBe('1–25 of 30')
    // The range reads the same before and after the order changes: wait for the rows themselves.
    await expect.poll(async () => (await column('n')).slice(0, 3)).toEqual(['1', '2', '3'])
    await page.getByTestId('facts-next').click()
    await expect.poll(() => page.getByTestId('facts-range').textContent()).toBe('26–30 of 30')
    await expect.poll(() => column('n')).toEqual(['26', '27', '28', '29', '30'])
    expect(await page.getByTestId('facts-next').isDisabled()).toBe(true)
  })

  it("shows a record's values and bitemporal history with what each version changed", async () => {
    await openCollection('flights')
    await recordLink(ids['tokyo']!).click()
    const detail = page.getByTestId('fact-detail')
    await expect.poll(() => detail.locator('h2').textContent()).toContain(ids['tokyo'])
    expect(await detail.getByTestId('fact-values').textContent()).toBe('codeNH10day2024-03-01toTokyofare905 USDtagswork')
    expect(await detail.getByTestId('fact-times').textContent()).toContain('Version2 of 2')
    const versions = detail.getByTestId('fact-version')
    expect(await versions.count()).toBe(2)
    expect(await versions.nth(0).getByTestId('fact-changes').textContent()).toBe('recorded')
    expect(await versions.nth(1).getByTestId('fact-changes').textContent()).toBe('fare: 820 USD → 905 USD')
    // Record time: the first version was replaced when the second was recorded; the second is the latest.
    expect(await versions.nth(0).textContent()).toMatch(/recorded .+, replaced /)
    expect(await versions.nth(1).textContent()).toContain('latest')
    expect(await rows().filter({ hasText: 'Tokyo' }).getAttribute('aria-current')).toBe('true')
    // The screenshot: schema, records and the history in one taller view.
    await page.setViewportSize({ width: 1280, height: 1500 })
    await page.evaluate('window.scrollTo(0, 0)')
    await shot('collections')
    await page.setViewportSize({ width: 1280, height: 800 })

    // A retracted record: its history ends with the retract.
    await page.getByTestId('facts-state').selectOption('retracted')
    await recordLink(ids['london']!).click()
    await expect.poll(() => detail.locator('h2').textContent()).toContain('retracted')
    expect(await detail.getByTestId('fact-version').nth(1).getByTestId('fact-changes').textContent()).toMatch(
      /^retracted \(stopped holding on \d{4}-\d{2}-\d{2}\)$/,
    )
    await page.getByTestId('facts-state').selectOption('current')
  })

  it('links an extracted record to the observation it came from, in the session replay', async () => {
    await openCollection('flights')
    await recordLink(ids['sydney']!).click()
    const detail = page.getByTestId('fact-detail')
    await expect.poll(() => detail.getByTestId('fact-times').textContent()).toContain('Sourceextraction: “QF50 on 2024-11-20”')
    await detail.getByTestId('fact-provenance-link').click()
    await expect.poll(() => page.getByTestId('replay-current').textContent()).toContain('book the Sydney flight, QF50')
    await page.goBack()
    await expect.poll(() => page.getByTestId('fact-detail').locator('h2').textContent()).toContain(ids['sydney'])
  })

  it('marks an entity-attribute fact uncertain when what it depended on changed, and lists dependants', async () => {
    await openCollection('entity_state')
    await page.getByTestId('facts-sort').selectOption('key')
    await expect.poll(() => column('key')).toEqual(['team_lead', 'release_owner'])
    const owner = rowWith('release_owner')
    expect(await owner.getByTestId('fact-uncertain').count()).toBe(1)
    expect(await rowWith('team_lead').getByTestId('fact-uncertain').count()).toBe(0)
    await owner.getByRole('link').click()
    const detail = page.getByTestId('fact-detail')
    await expect
      .poll(() => detail.getByTestId('fact-state-text').textContent())
      .toMatch(/^unknown now: it was Mina, but it depended on team_lead, which changed to Jihoon on \d{4}-\d{2}-\d{2}/)
    expect(await detail.locator('h2').getByTestId('fact-uncertain').count()).toBe(1)
    expect(await detail.getByTestId('fact-version').last().getByTestId('fact-changes').textContent()).toContain(
      'certainty: known → uncertain',
    )
    await rowWith('team_lead').getByRole('link').click()
    await expect
      .poll(() => detail.getByTestId('fact-dependants').textContent())
      .toContain('release_owneruncertainvia team_lead (uncertain)')
  })

  it('shows the agent’s own tool calls as derived records linked to their observations', async () => {
    await openCollection('tool_calls')
    await page.getByTestId('facts-sort').selectOption('command')
    await expect.poll(() => column('command')).toEqual(['npx vitest run', 'git status'])
    await rows().first().getByRole('link').click()
    const detail = page.getByTestId('fact-detail')
    await expect.poll(() => detail.textContent()).toContain('Derived from the event log')
    expect(await detail.getByTestId('fact-values').textContent()).toContain('commandnpx vitest run')
    await detail.getByTestId('fact-provenance-link').click()
    await expect.poll(() => page.getByTestId('replay-current').textContent()).toContain('Tests  3 passed (3)')
    await page.goBack()
  })

  it('passes axe-core (WCAG 2.1 A and AA) in the light and the dark theme, with no error on the page', async () => {
    const found: string[] = []
    for (const theme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: theme, reducedMotion: 'reduce' })
      await page.evaluate(`localStorage.removeItem('mnemo.theme')`)
      await page.reload()
      await expect.poll(() => page.getByTestId('fact-detail').count()).toBe(1)
      await expect.poll(() => rows().count()).toBeGreaterThan(0)
      if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.evaluate(AXE_SOURCE)
      const result = (await page.evaluate(
        `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })`,
      )) as { violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }
      for (const v of result.violations)
        found.push(
          `${theme}: ${v.id} (${v.impact}) at ${v.nodes
            .map((n) => n.target.join(' '))
            .slice(0, 3)
            .join(', ')}`,
        )
    }
    expect(found).toEqual([])
    expect(problems).toEqual([])
  })
})

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: false })
  if (process.env['UPDATE_SCREENSHOTS'] === '1') await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: false })
}
