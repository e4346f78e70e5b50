/**
 * Installs the pinned agent CLIs (test/agents/package.json, package-lock.json)
 * into test/agents/node_modules when they are missing or not the pinned
 * versions, and tells the suite whether it may run. Without a registry the
 * suite says so and skips, unless CI is set: there the agents are required.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { AGENT_PACKAGES, SUITE_DIR, installedVersion } from './install-state.js'

declare module 'vitest' {
  export interface ProvidedContext {
    agentsSkipReason: string
  }
}

function pinned(): Record<string, string> {
  return (JSON.parse(readFileSync(join(SUITE_DIR, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies
}

const mismatched = (): string[] =>
  Object.entries(pinned())
    .filter(([name, version]) => installedVersion(name) !== version)
    .map(([name, version]) => `${name}@${version}`)

export default function setup(project: TestProject): void {
  let skip = ''
  let missing = mismatched()
  if (missing.length > 0) {
    process.stderr.write(`agent suite: installing ${missing.join(', ')} into ${join(SUITE_DIR, 'node_modules')}\n`)
    // `npm install` with the lockfile rather than `npm ci`: a registry mirror without every platform's optional
    // binary package (opencode-darwin-*, …) makes `npm ci` refuse a lockfile that `npm install` reads fine.
    const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--loglevel=error'], {
      cwd: SUITE_DIR,
      encoding: 'utf8',
      timeout: 900_000,
    })
    missing = mismatched()
    if (missing.length > 0)
      skip = `the agent CLIs could not be installed (npm install exit ${r.status ?? r.signal}: ${(r.stderr || r.error?.message || '').trim().split('\n').slice(-3).join(' / ')}); missing ${missing.join(', ')}`
  }
  for (const pkg of AGENT_PACKAGES)
    if (skip === '' && !existsSync(join(SUITE_DIR, 'node_modules', '.bin', pkg.bin)))
      skip = `${pkg.bin} is not in ${join(SUITE_DIR, 'node_modules', '.bin')}`
  if (skip !== '' && process.env.CI) throw new Error(`agent suite: ${skip} (CI is set: the agents are required)`)
  if (skip !== '') process.stderr.write(`agent suite SKIPPED: ${skip}\n`)
  project.provide('agentsSkipReason', skip)
}
