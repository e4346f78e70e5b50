#!/usr/bin/env node
// Compares the hook CPU of two builds on one store: each `mnemo hook <event>` of each build and bare `node -e 0`,
// alternating run by run (so load on a shared machine hits them alike), on a private copy of the store per build;
// prints the median CPU (user + sys) of each and its ratio to bare node.
//
//   node scripts/bench/compare-hooks.mjs <dist-before> <dist-after> <MNEMO_HOME of a store> [runs] [events]
//
// events: comma-separated, default PostToolUse,SessionStart,UserPromptSubmit. The payloads are the start-up bench's
// (scripts/bench/startup.mjs): a fresh session per run, in the store's busiest project.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { busiestProject, copyStore, cpuSeconds, hookPayload } from './startup.mjs'

const [before, after, home, runsArg = '11', eventsArg = 'PostToolUse,SessionStart,UserPromptSubmit'] = process.argv.slice(2)
if (!home) {
  console.error('usage: compare-hooks.mjs <dist-before> <dist-after> <MNEMO_HOME> [runs] [events]')
  process.exit(2)
}
const env = { ...process.env }
for (const k of Object.keys(env)) if (k.startsWith('MNEMO_') || k === 'NODE_EXTRA_CA_CERTS' || k === 'NODE_OPTIONS') delete env[k]
const tmp = mkdtempSync(path.join(os.tmpdir(), 'mnemo-compare-hooks-'))
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
try {
  const cwd = busiestProject(home)
  const builds = [before, after].map((dist, k) => {
    const copy = path.join(tmp, `home-${k}`)
    copyStore(home, copy)
    return { cli: path.join(path.resolve(dist), 'adapters/cli/main.js'), home: copy, cpu: [] }
  })
  console.log('| event | bare node ms | before ms | after ms |\n| --- | --- | --- | --- |')
  let n = 0
  for (const event of eventsArg.split(',')) {
    const bare = []
    for (const b of builds) b.cpu = []
    for (let i = -1; i < Number(runsArg); i++) {
      const stdin = path.join(tmp, 'payload.json')
      const floor = cpuSeconds([process.execPath, '-e', '0'], '/dev/null', env)
      for (const b of builds) {
        writeFileSync(stdin, JSON.stringify(hookPayload(event, cwd, n++)))
        const cpu = cpuSeconds([process.execPath, b.cli, 'hook', event], stdin, { ...env, MNEMO_HOME: b.home })
        if (i >= 0) b.cpu.push(cpu * 1000)
      }
      if (i >= 0) bare.push(floor * 1000)
    }
    const f = median(bare)
    const cell = (b) => `${median(b.cpu).toFixed(0)} (${(median(b.cpu) / f).toFixed(2)}×)`
    console.log(`| ${event} | ${f.toFixed(0)} | ${cell(builds[0])} | ${cell(builds[1])} |`)
  }
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
