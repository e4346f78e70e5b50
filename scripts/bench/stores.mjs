// Generated stores for the benchmark, built once and cached under .bench-cache/ (gitignored).
//
// A store of size N is the first sessionsFor(N) generated sessions imported with the built CLI (`mnemo import`), so
// it is built the way a user's is. The cache key holds the generator version and the schema and derivation versions
// of the build under test: a change to either builds the stores again, so a figure is never read off a store made
// by other code.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { GENERATOR_VERSION, createGenerator, sessionsFor, writeTranscripts } from './generate.mjs'

/** Recall queries kept with each store (deterministic, drawn from the vocabulary of its sessions). */
export const QUERIES_PER_STORE = 200

export async function storeKey(root) {
  const { MIGRATIONS } = await import(path.join(root, 'dist/storage/sqlite/migrations.js'))
  const { DERIVATION_VERSION } = await import(path.join(root, 'dist/engine/index-event.js'))
  return `g${GENERATOR_VERSION}-s${MIGRATIONS.length}-d${DERIVATION_VERSION}`
}

/**
 * The cached store of about `observations` observations, built when absent.
 *
 * @returns `{ home, db, transcripts, sessions, observations, events, inputBytes, queries, importMs, importedEvents }`;
 *   `importMs` is the time the build's import took (undefined when the store came from the cache).
 */
export async function cachedStore(root, observations, log) {
  const cache = path.join(root, '.bench-cache')
  const sessions = sessionsFor(observations)
  const transcripts = path.join(cache, `transcripts-g${GENERATOR_VERSION}-${sessions}`)
  const home = path.join(cache, `store-${await storeKey(root)}-${sessions}`)
  const infoFile = path.join(home, 'bench-store.json')
  if (existsSync(infoFile)) return { ...JSON.parse(readFileSync(infoFile, 'utf8')), home, db: path.join(home, 'mnemo.db'), transcripts }

  if (!existsSync(path.join(transcripts, 'done.json'))) {
    log(`generating ${sessions} sessions into ${path.relative(root, transcripts)}`)
    rmSync(transcripts, { recursive: true, force: true })
    const written = writeTranscripts(path.join(transcripts, 'sessions'), sessions)
    writeFileSync(path.join(transcripts, 'done.json'), JSON.stringify(written))
  }
  const { bytes } = JSON.parse(readFileSync(path.join(transcripts, 'done.json'), 'utf8'))
  log(`importing ${sessions} sessions into ${path.relative(root, home)}`)
  rmSync(home, { recursive: true, force: true })
  mkdirSync(home, { recursive: true })
  const t0 = performance.now()
  const run = spawnSync(
    process.execPath,
    [path.join(root, 'dist/adapters/cli/main.js'), 'import', path.join(transcripts, 'sessions'), '--json'],
    {
      env: { PATH: process.env.PATH, MNEMO_HOME: home },
      encoding: 'utf8',
      maxBuffer: 1 << 30,
    },
  )
  const importMs = performance.now() - t0
  if (run.status !== 0) throw new Error(`mnemo import failed (${run.status}): ${run.stderr}`)
  const status = JSON.parse(
    spawnSync(process.execPath, [path.join(root, 'dist/adapters/cli/main.js'), 'status', '--json'], {
      env: { PATH: process.env.PATH, MNEMO_HOME: home },
      encoding: 'utf8',
    }).stdout,
  )
  const gen = createGenerator(1)
  for (let i = 0; i < sessions; i++) gen.next()
  const info = {
    sessions,
    observations: status.counts.observations,
    events: status.counts.events,
    inputBytes: bytes,
    queries: gen.queries(QUERIES_PER_STORE),
    importMs,
  }
  writeFileSync(infoFile, JSON.stringify(info))
  return { ...info, home, db: path.join(home, 'mnemo.db'), transcripts, built: true }
}
