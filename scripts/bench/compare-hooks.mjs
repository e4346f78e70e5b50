#!/usr/bin/env node
// Compares the hook CPU of two builds on one store: each `mnemo hook <event>` of each build and bare `node -e 0`,
// alternating run by run (the start-up bench's measureEach, so load on a shared machine hits them alike), on a
// private copy of the store per build; prints the median CPU (user + sys) of each and its ratio to bare node.
//
//   node scripts/bench/compare-hooks.mjs <dist-before> <dist-after> <MNEMO_HOME of a store> [runs] [events]
//
// events: comma-separated, default PostToolUse,SessionStart,UserPromptSubmit. The payloads are the start-up bench's
// (scripts/bench/startup.mjs): a fresh session per run, in the store's busiest project.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { busiestProject, copyStore, hookPayload, measureEach } from './startup.mjs'

const [before, after, home, runsArg = '11', eventsArg = 'PostToolUse,SessionStart,UserPromptSubmit'] = process.argv.slice(2)
if (!home) {
  console.error('usage: compare-hooks.mjs <dist-before> <dist-after> <MNEMO_HOME> [runs] [events]')
  process.exit(2)
}
const env = { ...process.env }
for (const k of Object.keys(env)) if (k.startsWith('MNEMO_') || k === 'NODE_EXTRA_CA_CERTS' || k === 'NODE_OPTIONS') delete env[k]
const tmp = mkdtempSync(path.join(os.tmpdir(), 'mnemo-compare-hooks-'))
try {
  const cwd = busiestProject(home)
  const builds = [before, after].map((dist, k) => {
    const copy = path.join(tmp, `home-${k}`)
    copyStore(home, copy)
    return { cli: path.join(path.resolve(dist), 'adapters/cli/main.js'), home: copy }
  })
  console.log('| event | bare node ms | before ms | after ms |\n| --- | --- | --- | --- |')
  let n = 0
  for (const event of eventsArg.split(',')) {
    // Each run of each build gets a fresh session's payload (so it stores a new event), as the start-up bench's hooks.
    const subject = (b) => () => {
      const stdin = path.join(tmp, `payload-${n}.json`)
      writeFileSync(stdin, JSON.stringify(hookPayload(event, cwd, n++)))
      return { argv: [process.execPath, b.cli, 'hook', event], stdin, env: { MNEMO_HOME: b.home } }
    }
    const [old, now] = measureEach(Number(runsArg), builds.map(subject), env)
    const cell = (m) => `${(m.value * 1000).toFixed(0)} (${(m.value / m.floor).toFixed(2)}×)`
    console.log(`| ${event} | ${(old.floor * 1000).toFixed(0)} | ${cell(old)} | ${cell(now)} |`)
  }
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
