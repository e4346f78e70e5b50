/**
 * Shared pieces of the agent suite: a scratch world per agent (HOME,
 * MNEMO_HOME, a git project), the mnemo CLI, the hook timer that `connect
 * --node` puts in front of every hook, running an agent binary, and reading
 * back what mnemo stored (through `mnemo export` and `mnemo show`).
 */
import { execFileSync, spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_DIR } from './install-state.js'
import type { FakeModel, ModelRequest } from './fake-model.js'

export const CLI = join(REPO_DIR, 'dist', 'adapters', 'cli', 'bin.cjs')
/** Where each run's outputs go (gitignored): agent stdout/stderr, model requests, hook payloads. */
export const ARTIFACTS = join(REPO_DIR, 'artifacts', 'agents')

/** One agent's scratch world. */
export interface World {
  agent: string
  root: string
  home: string
  mnemoHome: string
  project: string
  /** The hook timer: a `node` stand-in that times each `hook` run and a bare `node -e 0` after it. */
  nodeWrapper: string
  timingDir: string
  out: string
}

/** A fresh world under `base` (removed first): HOME, MNEMO_HOME, a git project with one commit. */
export function createWorld(base: string, agent: string): World {
  const root = join(base, agent)
  rmSync(root, { recursive: true, force: true })
  const w: World = {
    agent,
    root,
    home: join(root, 'home'),
    mnemoHome: join(root, 'mnemo-home'),
    project: join(root, 'project'),
    nodeWrapper: join(root, 'bin', 'node'),
    timingDir: join(root, 'hooks'),
    out: join(ARTIFACTS, agent),
  }
  for (const d of [w.home, w.project, join(root, 'bin'), w.timingDir]) mkdirSync(d, { recursive: true })
  rmSync(w.out, { recursive: true, force: true })
  mkdirSync(w.out, { recursive: true })
  w.project = realpathSync(w.project)
  writeFileSync(join(w.project, 'README.md'), `# ${agent} project\n`)
  const git = (...args: string[]): void => {
    execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: w.project, stdio: 'ignore' })
  }
  git('init', '-q')
  git('add', '.')
  git('commit', '-qm', 'init')
  writeHookTimer(w)
  return w
}

/**
 * The hook timer (a POSIX sh script). For `<cli> hook <Event> …` it saves the
 * agent's payload, runs the real node with it, records the wall time, then
 * runs `node -e 0` and records that too, so each hook has a bare-node floor
 * measured at the same moment; anything else (`<cli> mcp`) is exec'd as is.
 */
function writeHookTimer(w: World): void {
  const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`
  writeFileSync(
    w.nodeWrapper,
    `#!/bin/sh
NODE=${q(process.execPath)}
DIR=${q(w.timingDir)}
if [ "$2" != hook ]; then exec "$NODE" "$@"; fi
base="$DIR/$(date +%s%N)-$3"
cat > "$base.stdin.json"
t0=$(date +%s%N)
"$NODE" "$@" < "$base.stdin.json" > "$base.stdout" 2> "$base.stderr"; rc=$?
t1=$(date +%s%N)
"$NODE" -e 0 < /dev/null
t2=$(date +%s%N)
printf '{"event":"%s","rc":%d,"hookMs":%d,"bareNodeMs":%d}\\n' "$3" "$rc" $(( (t1 - t0) / 1000000 )) $(( (t2 - t1) / 1000000 )) > "$base.meta.json"
cat "$base.stdout"
cat "$base.stderr" >&2
exit $rc
`,
  )
  chmodSync(w.nodeWrapper, 0o755)
}

/** Runs the mnemo CLI in a world (HOME and MNEMO_HOME set, cwd the project); returns stdout. */
export function mnemo(w: World, args: string[]): string {
  return execFileSync(process.execPath, [CLI, ...args], {
    cwd: w.project,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: w.home, MNEMO_HOME: w.mnemoHome },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/** One hook run the timer saw. */
export interface HookCall {
  event: string
  rc: number
  hookMs: number
  bareNodeMs: number
  /** The payload the agent sent, parsed (undefined when not JSON). */
  payload: unknown
  stdin: string
  stdout: string
}

/** Hook runs recorded so far, in firing order. */
export function hookCalls(w: World): HookCall[] {
  return readdirSync(w.timingDir)
    .filter((f) => f.endsWith('.meta.json'))
    .sort()
    .map((f) => {
      const base = join(w.timingDir, f.slice(0, -'.meta.json'.length))
      const meta = JSON.parse(readFileSync(`${base}.meta.json`, 'utf8')) as Omit<HookCall, 'payload' | 'stdin' | 'stdout'>
      const stdin = readFileSync(`${base}.stdin.json`, 'utf8')
      let payload: unknown
      try {
        payload = JSON.parse(stdin)
      } catch {
        payload = undefined
      }
      return { ...meta, payload, stdin, stdout: existsSync(`${base}.stdout`) ? readFileSync(`${base}.stdout`, 'utf8') : '' }
    })
}

/**
 * Waits (at most 30 s) until no hook the timer started is still running: an
 * agent may exit before its last hooks finish (OpenCode's plugin starts Stop
 * detached), and the store is read right after.
 */
async function hooksSettled(w: World): Promise<void> {
  const pending = (): number => {
    const files = readdirSync(w.timingDir)
    return files.filter((f) => f.endsWith('.stdin.json')).length - files.filter((f) => f.endsWith('.meta.json')).length
  }
  for (let i = 0; i < 300 && pending() > 0; i++) await new Promise((r) => setTimeout(r, 100))
}

/** What one agent run produced. */
export interface AgentRun {
  label: string
  exitCode: number | null
  wallMs: number
  stdout: string
  stderr: string
  /** The requests the fake model received during this run. */
  requests: ModelRequest[]
  /** The subset the brain answered, in order. */
  modelCalls: ModelRequest[]
  hooks: HookCall[]
}

/**
 * Runs one agent session: `bin args…` in the project, with only `env` (plus a
 * PATH holding node) in the environment, killed after `timeoutMs`.
 */
export async function runAgent(
  w: World,
  model: FakeModel,
  label: string,
  bin: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 150_000,
): Promise<AgentRun> {
  const firstRequest = model.requests.length
  const firstHook = hookCalls(w).length
  const t0 = Date.now()
  const child = spawn(bin, args, {
    cwd: w.project,
    env: { PATH: `${join(process.execPath, '..')}:/usr/bin:/bin:/usr/local/bin`, HOME: w.home, TERM: 'dumb', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString('utf8')
  })
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString('utf8')
  })
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  const exitCode = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  clearTimeout(timer)
  const wallMs = Date.now() - t0
  await hooksSettled(w)
  writeFileSync(join(w.out, `${label}.stdout`), stdout)
  writeFileSync(join(w.out, `${label}.stderr`), stderr)
  const requests = model.requests.slice(firstRequest)
  writeFileSync(
    join(w.out, `${label}.requests.jsonl`),
    `${requests.map((r) => JSON.stringify({ api: r.api, path: r.path, brain: r.brain, reply: r.reply, body: r.body })).join('\n')}\n`,
  )
  return {
    label,
    exitCode,
    wallMs,
    stdout,
    stderr,
    requests,
    modelCalls: requests.filter((r) => r.reply !== undefined),
    hooks: hookCalls(w).slice(firstHook),
  }
}

/** An event as `mnemo export` writes it. */
export interface ExportedEvent {
  kind: 'event'
  agent: string
  type: string
  sessionKey: string
  project: { root: string; name: string }
  payload: unknown
}

/** An observation as `mnemo show <session> --json` gives it. */
export interface ShownObservation {
  kind: string
  role: string | null
  tool: string | null
  text: string
  flags: string[]
}

export interface StoredSession {
  id: string
  sessionKey: string
  agent: string
  project: string
  observations: ShownObservation[]
}

/** Every event in the store (mnemo export). */
export function storedEvents(w: World): ExportedEvent[] {
  return mnemo(w, ['export'])
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { kind: string })
    .filter((r): r is ExportedEvent => r.kind === 'event')
}

/** Every session, oldest first, with its observations (mnemo sessions + show). */
export function storedSessions(w: World): StoredSession[] {
  const list = (
    JSON.parse(mnemo(w, ['sessions', '--all-projects', '--json', '--limit', '100'])) as {
      sessions: Array<{ id: string; sessionKey: string; agent: string; project: string }>
    }
  ).sessions.reverse()
  return list.map((s) => ({
    ...s,
    observations: (JSON.parse(mnemo(w, ['show', s.id, '--json'])) as { observations: ShownObservation[] }).observations,
  }))
}

/** Median of a list of numbers (NaN for none). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  if (s.length === 0) return Number.NaN
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/**
 * Replaces this machine's paths in a captured text with placeholders, so the
 * fixtures hold the agents' formats and nothing of the machine that ran them.
 */
export function placeholderPaths(w: World, text: string): string {
  const pairs: Array<[string, string]> = [
    [w.project, '/home/dev/project'],
    [w.home, '/home/dev'],
    [w.mnemoHome, '/home/dev/.mnemo'],
    [w.root, '/home/dev/scratch'],
    [REPO_DIR, '/opt/mnemo'],
    [join(process.execPath, '..'), '/usr/local/bin'],
  ]
  let out = text
  for (const [from, to] of pairs) {
    out = out.split(from).join(to)
    out = out.split(JSON.stringify(from).slice(1, -1)).join(to)
  }
  return out
}
