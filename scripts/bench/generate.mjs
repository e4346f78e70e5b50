// Seeded, deterministic Claude Code transcripts for the benchmark (no ../shared needed).
//
// The shapes and scale agree with ../shared/tools/perf/gen-claude-transcripts.mjs: six projects (ts, tsx, py, go), each
// with its own 140-file tree and domain vocabulary; prompts; assistant records with thinking + text + tool_use (Read,
// Edit, Bash, Grep, Glob, Write); tool results of 300–6,000 characters (cat -n listings, test runs with failures,
// type-checker errors, git output, grep hits); an occasional summary record; about 50 observations per session on
// import. One difference, on purpose: each session coins a few new identifiers in its project (a store's vocabulary
// keeps growing as a real codebase's does), so a 100k store has a larger vocabulary than a 10k one.
//
// Sessions are generated in one stream from the seed: the first n sessions are the same whatever the total, so the
// 1k store is a prefix of the 10k store, which is a prefix of the 100k store.
//
// Bump GENERATOR_VERSION whenever the output changes: cached stores are keyed by it.
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'

export const GENERATOR_VERSION = 1
/** Observations per generated session on import, measured (see sessionsFor). */
export const OBSERVATIONS_PER_SESSION = 50

/** Sessions to generate for about `observations` observations. */
export function sessionsFor(observations) {
  return Math.max(1, Math.round(observations / OBSERVATIONS_PER_SESSION))
}

function mulberry32(seed) {
  let s = seed | 0
  return () => {
    s = (s + 0x6d2b79f5) | 0
    let t = Math.imul(s ^ (s >>> 15), 1 | s)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const words = (s) => s.trim().split(/\s+/)
const GENERIC = words(`account action adapter address agent alert allocation amount analytics api archive argument array
attempt attribute audit auth backoff backend balance batch bearer billing binding blob bucket buffer build bundle cache
callback cancel capacity cart catalog certificate channel charge checkout chunk claim client cluster column command commit
component config connection consumer container context contract cookie coupon credential cron cursor customer dashboard
database deadline debounce decoder default delivery dependency deploy digest discount dispatch document domain draft
driver email encoder endpoint entity envelope error event export factory feature fetch field file filter flag flush
form format gateway graph guard handler hash header health history hook identity import index inventory invoice item
job journal key label latency layout ledger limit listener loader locale lock log lookup mailer manifest mapper marker
merchant message metric middleware migration model module monitor mutation namespace node notification offset order
origin outbox owner package page pagination parser partition password payload payment peer permission pipeline plan
plugin policy pool port preference price process producer profile projection promise provider proxy publisher quota
query queue quote rate reader receipt record redirect refund region registry release replica report repository request
resolver resource response result retry revision role route rule runner sandbox scheduler schema scope secret segment
selector sequence serializer server service session setting shard shipment signature sink snapshot socket source span
spec state status storage store stream subscriber subscription summary supplier switch sync table tag task template
tenant test thread throttle ticket timeout timer token topic trace transaction transform transport trigger upload user
validator value vendor version view visitor voucher wallet warehouse webhook widget worker workflow writer`)
const VERBS = words(`add apply assert build cache calculate cancel check clean clear close collect compare compute configure
convert create decode delete deserialize dispatch emit encode ensure enqueue evaluate expire export extract fetch filter
find flush format generate get handle hydrate import init insert invalidate list load lock map merge migrate normalize
notify open parse patch persist poll prepare process publish purge push read rebuild reconcile record refresh register
reject release reload remove render replay reset resolve restore retry revoke rollback save schedule send serialize set
settle sign sort split start stop store submit subscribe sync throttle track transform trim unlock update upsert
validate verify wait watch write`)
const ADJ = words(`active async atomic base batched broken cached cold concurrent current default deprecated dirty duplicate empty
expired external failed flaky global hot idle initial invalid lazy legacy local missing nested null old optional
orphaned partial pending primary private public raw readonly remote required stale strict sync temporary unknown
unused upstream valid`)
const PROJECTS = [
  ['acme-api', 'ts', 'order payment refund invoice checkout cart coupon shipment customer merchant ledger receipt'],
  ['billing-service', 'ts', 'invoice subscription plan charge proration dunning tax ledger wallet credit usage meter'],
  ['search-indexer', 'py', 'index shard tokenizer analyzer posting segment query ranking crawler document embedding vector'],
  ['web-dashboard', 'tsx', 'chart widget layout theme sidebar modal tooltip table filter pagination dashboard toast'],
  ['auth-gateway', 'go', 'token session oauth jwt scope claim refresh revoke tenant identity mfa cookie'],
  ['data-pipeline', 'py', 'ingest batch partition schema parquet warehouse backfill dag task lineage watermark cdc'],
]
/** Project folder names, in the order sessions and queries take them (query i is about project i % 6). */
export const PROJECT_NAMES = PROJECTS.map(([name]) => name)
// Syllables for identifiers a codebase coins over time (product names, new modules): new words, not new combinations.
const SYLLABLES = words('ka ro mi tes van dor lu pex zen tri mo sa bel quo nix ar ven tal ori cus')

/**
 * A generator of sessions: `next()` returns one session's transcript records and the project folder it belongs in.
 * Deterministic for a seed.
 */
export function createGenerator(seed = 1) {
  const rnd = mulberry32(seed)
  const ri = (a, b) => a + Math.floor(rnd() * (b - a + 1))
  const pick = (xs) => xs[Math.floor(rnd() * xs.length)]
  const hex = (n) => {
    let s = ''
    for (let i = 0; i < n; i++) s += '0123456789abcdef'[ri(0, 15)]
    return s
  }
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${pick(['8', '9', 'a', 'b'])}${hex(3)}-${hex(12)}`
  const cap = (s) => s[0].toUpperCase() + s.slice(1)
  const camel = (...ws) => ws[0] + ws.slice(1).map(cap).join('')
  const snake = (s) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
  const coin = () => Array.from({ length: ri(2, 3) }, () => pick(SYLLABLES)).join('')

  const projects = PROJECTS.map(([name, lang, domain]) => {
    const p = { name, lang, ext: lang, domain: words(domain), cwd: `/home/dev/code/${name}` }
    const dirs = [
      'src',
      `src/${pick(p.domain)}`,
      `src/${pick(p.domain)}`,
      'src/lib',
      'src/api',
      'src/db',
      'test',
      `src/${pick(GENERIC)}`,
      'scripts',
    ]
    const files = new Set()
    while (files.size < 140) {
      const d = pick(dirs)
      const base = rnd() < 0.5 ? pick(p.domain) : `${pick(p.domain)}-${pick(GENERIC)}`
      const stem = lang === 'py' ? snake(base.replace(/-/g, '_')) : base
      files.add(`${d}/${d.startsWith('test') ? stem + (lang === 'py' ? '_test' : '.test') : stem}.${p.ext}`)
    }
    p.files = [...files]
    p.symbols = Array.from({ length: 400 }, () => ident(p))
    p.types = Array.from({ length: 120 }, () => typeName(p))
    return p
  })
  function ident(p) {
    return camel(pick(VERBS), pick(rnd() < 0.5 ? p.domain : GENERIC), ...(rnd() < 0.4 ? [pick(GENERIC)] : []))
  }
  function typeName(p) {
    return (
      cap(pick(rnd() < 0.5 ? p.domain : GENERIC)) +
      pick(['', 'Service', 'Repository', 'Options', 'Result', 'Error', 'Event', 'Config', 'Client', 'State'])
    )
  }
  // Symbols the recent sessions use most: a session works on what the project coined lately, and on the old code.
  const symbol = (p) =>
    rnd() < 0.25 && p.symbols.length > 400 ? p.symbols[ri(Math.max(400, p.symbols.length - 60), p.symbols.length - 1)] : pick(p.symbols)

  function codeLine(p, depth) {
    const ind = '  '.repeat(depth)
    const s = symbol(p)
    const t = pick(p.types)
    const v = camel(pick(ADJ), pick(p.domain))
    if (p.lang === 'py')
      return (
        ind +
        pick([
          () => `def ${snake(s)}(self, ${snake(v)}: ${t}) -> ${pick(p.types)}:`,
          () => `${snake(v)} = self.${snake(symbol(p))}(${snake(pick(GENERIC))}_id)`,
          () => `if not ${snake(v)}:\n${ind}    raise ${pick(p.types)}Error("${pick(ADJ)} ${pick(p.domain)} for ${pick(GENERIC)}")`,
          () => `logger.${pick(['info', 'warning', 'debug'])}("${pick(VERBS)} %s ${pick(GENERIC)}", ${snake(v)})`,
          () => `return [${snake(pick(GENERIC))} for ${snake(pick(GENERIC))} in ${snake(v)} if ${snake(pick(GENERIC))}.${pick(ADJ)}]`,
          () => `# ${cap(pick(VERBS))} the ${pick(ADJ)} ${pick(p.domain)} before ${pick(VERBS)}ing the ${pick(GENERIC)}`,
          () => `from ${pick(p.domain)}.${pick(GENERIC)} import ${t}, ${pick(p.types)}`,
        ])()
      )
    if (p.lang === 'go')
      return (
        ind +
        pick([
          () => `func (s *${t}) ${cap(s)}(ctx context.Context, ${v} ${pick(p.types)}) error {`,
          () => `${v}, err := s.${pick(GENERIC)}.${cap(symbol(p))}(ctx, ${pick(GENERIC)}ID)`,
          () => `if err != nil {\n${ind}\treturn fmt.Errorf("${pick(VERBS)} ${pick(p.domain)}: %w", err)\n${ind}}`,
          () => `// ${cap(pick(VERBS))} the ${pick(ADJ)} ${pick(p.domain)} before ${pick(VERBS)}ing the ${pick(GENERIC)}`,
          () => `log.Printf("${pick(VERBS)} %s ${pick(GENERIC)}", ${v}.ID)`,
          () => `return &${t}{${cap(pick(GENERIC))}: ${v}, ${cap(pick(ADJ))}: true}, nil`,
        ])()
      )
    return (
      ind +
      pick([
        () => `export async function ${s}(${v}: ${t}, options: ${pick(p.types)} = {}): Promise<${pick(p.types)}> {`,
        () => `const ${v} = await this.${pick(GENERIC)}.${symbol(p)}(${pick(GENERIC)}Id, { ${pick(GENERIC)}: ${ri(1, 500)} })`,
        () => `if (!${v}) throw new ${pick(p.types)}Error(\`${pick(ADJ)} ${pick(p.domain)} \${${pick(GENERIC)}Id}\`)`,
        () => `import { ${t}, ${pick(p.types)} } from '../${pick(p.domain)}/${pick(GENERIC)}'`,
        () => `// ${cap(pick(VERBS))} the ${pick(ADJ)} ${pick(p.domain)} before ${pick(VERBS)}ing the ${pick(GENERIC)}`,
        () => `logger.${pick(['info', 'warn', 'debug'])}('${pick(VERBS)} ${pick(GENERIC)}', { ${v}, ${pick(GENERIC)}Id })`,
        () => `return ${v}.filter((${pick(GENERIC)}) => ${pick(GENERIC)}.${pick(ADJ)}).map(${symbol(p)})`,
        () => `for (const ${pick(GENERIC)} of ${v}.${pick(GENERIC)}s) await ${symbol(p)}(${pick(GENERIC)})`,
      ])()
    )
  }
  function codeBlock(p, lines) {
    const out = []
    let depth = 0
    for (let i = 0; i < lines; i++) {
      out.push(codeLine(p, depth))
      depth = Math.max(0, Math.min(3, depth + pick([-1, 0, 0, 1])))
    }
    return out.join('\n')
  }
  const catN = (code, from = 1) =>
    code
      .split('\n')
      .map((l, i) => `${String(i + from).padStart(6)}\t${l}`)
      .join('\n')
  const sentence = (p) =>
    pick([
      () => `I'll look at how ${symbol(p)} handles the ${pick(ADJ)} ${pick(p.domain)} case in ${pick(p.files)}.`,
      () => `The failure comes from ${symbol(p)}: it ${pick(VERBS)}s the ${pick(GENERIC)} before the ${pick(p.domain)} is ${pick(ADJ)}.`,
      () => `Let me run the ${pick(p.domain)} tests to confirm the ${pick(GENERIC)} change.`,
      () => `Now I'll update ${pick(p.files)} so ${symbol(p)} ${pick(VERBS)}s the ${pick(GENERIC)} only once.`,
      () => `The ${pick(p.types)} already exposes ${symbol(p)}, so I can reuse it instead of adding a new ${pick(GENERIC)}.`,
      () =>
        `Tests pass. The ${pick(ADJ)} ${pick(p.domain)} path now ${pick(VERBS)}s the ${pick(GENERIC)} and ${pick(VERBS)}s on ${pick(GENERIC)} errors.`,
      () => `Searching for callers of ${symbol(p)} to see where the ${pick(GENERIC)} ${pick(GENERIC)} is set.`,
    ])()
  const prompt = (p) =>
    pick([
      () =>
        `Fix the ${pick(p.domain)} bug in ${pick(p.files)}: ${symbol(p)} returns a ${pick(ADJ)} ${pick(GENERIC)} when the ${pick(p.domain)} is ${pick(ADJ)}.`,
      () =>
        `Add ${pick(GENERIC)} ${pick(['support', 'validation', 'caching', 'retries', 'logging', 'metrics'])} to ${symbol(p)} in ${pick(p.files)}. Keep the ${pick(p.types)} API unchanged.`,
      () =>
        `Why does the ${pick(p.domain)} test in ${pick(p.files.filter((f) => f.includes('test')).concat(p.files))} fail with "${pick(p.types)}Error: ${pick(ADJ)} ${pick(GENERIC)}"?`,
      () => `Refactor ${symbol(p)} and ${symbol(p)} to share one ${pick(p.types)}; the ${pick(GENERIC)} logic is duplicated.`,
      () =>
        `We decided to ${pick(VERBS)} ${pick(p.domain)} ${pick(GENERIC)}s in a ${pick(GENERIC)} ${pick(['queue', 'table', 'worker', 'cron job'])} instead of inline. Please implement it.`,
      () =>
        `The ${pick(p.domain)} endpoint is slow (p95 ${ri(300, 4000)} ms). Profile ${symbol(p)} and fix the ${pick(['N+1 query', 'missing index', 'lock contention', 'serialization cost'])}.`,
      () => 'continue',
      () => `Run the tests and commit with a message about the ${pick(p.domain)} ${pick(GENERIC)} change.`,
    ])()

  function bash(p) {
    const kind = pick(['test', 'test', 'tsc', 'git', 'grep', 'build', 'ls'])
    let command
    let out
    let isError = false
    if (kind === 'test') {
      const f = pick(p.files)
      command =
        p.lang === 'py'
          ? `pytest -q ${f}`
          : p.lang === 'go'
            ? `go test ./${path.dirname(f)}/...`
            : `npm test -- ${path.basename(f).split('.')[0]}`
      const n = ri(3, 40)
      const lines = Array.from(
        { length: n },
        () => `  ${rnd() < 0.9 ? '✓' : '✗'} ${pick(VERBS)}s the ${pick(ADJ)} ${pick(p.domain)} ${pick(GENERIC)} (${ri(1, 900)} ms)`,
      )
      isError = rnd() < 0.2
      const failure = isError
        ? `\n  ● ${symbol(p)} › ${pick(VERBS)}s ${pick(GENERIC)}\n\n    expect(received).toEqual(expected)\n\n    Expected: "${pick(ADJ)}"\n    Received: "${pick(ADJ)}"\n\n      at ${symbol(p)} (${f}:${ri(10, 300)}:${ri(3, 40)})\n`
        : ''
      out = `${isError ? 'FAIL' : 'PASS'} ${f}\n${lines.join('\n')}\n${failure}\nTests: ${isError ? '1 failed, ' : ''}${n} passed, ${n + (isError ? 1 : 0)} total\nTime: ${(rnd() * 20).toFixed(2)} s`
      if (isError) out = `Exit code 1\n${out}`
    } else if (kind === 'tsc') {
      command = p.lang === 'go' ? 'go vet ./...' : p.lang === 'py' ? 'mypy src' : 'npx tsc --noEmit'
      const n = ri(0, 12)
      out = Array.from(
        { length: n },
        () =>
          `${pick(p.files)}(${ri(1, 400)},${ri(1, 60)}): error TS${ri(2000, 2800)}: Property '${symbol(p)}' does not exist on type '${pick(p.types)}'.`,
      ).join('\n')
      if (n > 0) {
        isError = true
        out = `Exit code 2\n${out}`
      }
    } else if (kind === 'git') {
      command = pick(['git status', 'git log --oneline -n 15', 'git diff --stat'])
      out =
        command === 'git status'
          ? `On branch ${pick(['main', `fix/${pick(p.domain)}`, `feat/${pick(GENERIC)}`])}\nChanges not staged for commit:\n${Array.from({ length: ri(1, 8) }, () => `\tmodified:   ${pick(p.files)}`).join('\n')}`
          : Array.from({ length: 15 }, () =>
              command.includes('stat')
                ? ` ${pick(p.files)} | ${ri(1, 80)} ${'+'.repeat(ri(1, 20))}${'-'.repeat(ri(0, 10))}`
                : `${hex(7)} ${cap(pick(VERBS))} ${pick(ADJ)} ${pick(p.domain)} ${pick(GENERIC)} in ${symbol(p)}`,
            ).join('\n')
    } else if (kind === 'grep') {
      command = `grep -rn "${symbol(p)}" src`
      out = Array.from({ length: ri(1, 25) }, () => `${pick(p.files)}:${ri(1, 400)}:${codeLine(p, 1)}`).join('\n')
    } else if (kind === 'build') {
      command = p.lang === 'go' ? 'go build ./...' : p.lang === 'py' ? 'pip install -e .' : 'npm run build'
      out = Array.from(
        { length: ri(3, 20) },
        () => `${pick(['compiled', 'bundled', 'emitted', 'resolved'])} ${pick(p.files)} (${ri(1, 300)} kB)`,
      ).join('\n')
    } else {
      const d = path.dirname(pick(p.files))
      command = `ls -la ${d}`
      out = p.files
        .filter((f) => f.startsWith(d))
        .map(
          (f) =>
            `-rw-r--r--  1 dev dev ${String(ri(200, 40000)).padStart(6)} Mar ${ri(1, 28)} ${ri(10, 23)}:${ri(10, 59)} ${path.basename(f)}`,
        )
        .join('\n')
    }
    return {
      input: { command, description: `${cap(pick(VERBS))} ${pick(p.domain)} ${pick(GENERIC)}` },
      result: out || '(no output)',
      toolUseResult: { stdout: out, stderr: '', interrupted: false, isImage: false },
      isError,
    }
  }

  function toolCall(p) {
    const tool = pick(['Read', 'Read', 'Read', 'Edit', 'Edit', 'Bash', 'Bash', 'Grep', 'Glob', 'Write'])
    const file = `${p.cwd}/${pick(p.files)}`
    if (tool === 'Read') {
      const code = codeBlock(p, ri(15, 110))
      const numLines = code.split('\n').length
      return {
        tool,
        input: { file_path: file },
        result: catN(code),
        toolUseResult: { type: 'text', file: { filePath: file, content: code, numLines, startLine: 1, totalLines: numLines } },
      }
    }
    if (tool === 'Edit') {
      const old = codeBlock(p, ri(1, 6))
      const neu = codeBlock(p, ri(1, 10))
      const result = `The file ${file} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${catN(codeBlock(p, ri(6, 25)), ri(1, 200))}`
      return {
        tool,
        input: { file_path: file, old_string: old, new_string: neu },
        result,
        toolUseResult: { filePath: file, oldString: old, newString: neu, structuredPatch: [] },
      }
    }
    if (tool === 'Write') {
      const code = codeBlock(p, ri(10, 60))
      return {
        tool,
        input: { file_path: file, content: code },
        result: `File created successfully at: ${file}`,
        toolUseResult: { type: 'create', filePath: file, content: code },
      }
    }
    if (tool === 'Bash') return { tool, ...bash(p) }
    if (tool === 'Grep') {
      const result = Array.from({ length: ri(1, 30) }, () => `${p.cwd}/${pick(p.files)}:${ri(1, 400)}:${codeLine(p, 1)}`).join('\n')
      return {
        tool,
        input: { pattern: symbol(p), path: `${p.cwd}/src`, output_mode: 'content', '-n': true },
        result,
        toolUseResult: { mode: 'content', numFiles: ri(1, 10), filenames: [], content: result },
      }
    }
    const result = Array.from({ length: ri(1, 20) }, () => `${p.cwd}/${pick(p.files)}`).join('\n')
    const filenames = result.split('\n')
    return {
      tool,
      input: { pattern: `src/**/*${pick(p.domain)}*.${p.ext}` },
      result,
      toolUseResult: { filenames, durationMs: ri(1, 80), numFiles: filenames.length, truncated: false },
    }
  }

  let now = Date.parse('2025-09-01T08:00:00Z')
  let index = 0
  return {
    projects,
    /** The next session: `{ project, folder, sessionId, records }` (records are transcript objects). */
    next() {
      const p = projects[index % projects.length]
      index++
      // The codebase grows: a few identifiers no earlier session used.
      for (let i = ri(1, 3); i > 0; i--) p.symbols.push(camel(pick(VERBS), coin(), pick(p.domain)))
      const sessionId = uuid()
      let parent = null
      const records = []
      const base = () => ({
        parentUuid: parent,
        isSidechain: false,
        userType: 'external',
        cwd: p.cwd,
        sessionId,
        version: '2.0.14',
        gitBranch: 'main',
      })
      if (rnd() < 0.3)
        records.push({
          type: 'summary',
          summary: `${cap(pick(VERBS))} ${pick(p.domain)} ${pick(GENERIC)} in ${symbol(p)}`,
          leafUuid: uuid(),
        })
      const push = (r) => {
        const id = uuid()
        records.push({ ...base(), ...r, uuid: id, timestamp: new Date(now).toISOString() })
        parent = id
        now += ri(2, 60) * 1000
      }
      for (let q = ri(1, 3); q > 0; q--) {
        push({ type: 'user', message: { role: 'user', content: prompt(p) } })
        for (let s = ri(4, 14); s > 0; s--) {
          const call = toolCall(p)
          const id = `toolu_01${hex(22)}`
          const content = []
          if (rnd() < 0.3) content.push({ type: 'thinking', thinking: sentence(p), signature: hex(40) })
          if (rnd() < 0.6) content.push({ type: 'text', text: sentence(p) })
          content.push({ type: 'tool_use', id, name: call.tool, input: call.input })
          push({
            type: 'assistant',
            message: {
              id: `msg_01${hex(22)}`,
              type: 'message',
              role: 'assistant',
              model: 'claude-sonnet-4-5-20250929',
              content,
              stop_reason: 'tool_use',
              usage: { input_tokens: ri(100, 9000), output_tokens: ri(20, 900) },
            },
            requestId: `req_${hex(24)}`,
          })
          push({
            type: 'user',
            message: {
              role: 'user',
              content: [{ type: 'tool_result', tool_use_id: id, content: call.result, ...(call.isError ? { is_error: true } : {}) }],
            },
            toolUseResult: call.toolUseResult,
          })
        }
        push({
          type: 'assistant',
          message: {
            id: `msg_01${hex(22)}`,
            type: 'message',
            role: 'assistant',
            model: 'claude-sonnet-4-5-20250929',
            content: [{ type: 'text', text: `${sentence(p)} ${sentence(p)} ${sentence(p)}` }],
            stop_reason: 'end_turn',
          },
        })
      }
      now += ri(10, 600) * 60_000
      return { project: p, folder: p.cwd.replace(/\//g, '-'), sessionId, records }
    },
    /** Query texts a user of this store would type: prompts, identifiers, error words, of the sessions generated so far. */
    queries(n) {
      const out = []
      for (let i = 0; i < n; i++) {
        const p = projects[i % projects.length]
        out.push(
          pick([
            () => prompt(p),
            () => symbol(p),
            () => `${pick(p.domain)} ${pick(GENERIC)} ${pick(ADJ)}`,
            () => `${pick(p.types)}Error ${pick(ADJ)} ${pick(GENERIC)}`,
            () => `where did we ${pick(VERBS)} the ${pick(p.domain)} ${pick(GENERIC)}?`,
            () => path.basename(pick(p.files)),
          ])(),
        )
      }
      return out
    },
  }
}

/**
 * Writes `sessions` sessions as Claude Code transcripts under `outDir/<project folder>/<session id>.jsonl`.
 *
 * @returns `{ sessions, bytes }` written.
 */
export function writeTranscripts(outDir, sessions, seed = 1) {
  const gen = createGenerator(seed)
  let bytes = 0
  for (let i = 0; i < sessions; i++) {
    const s = gen.next()
    const dir = path.join(outDir, s.folder)
    mkdirSync(dir, { recursive: true })
    const text = `${s.records.map((r) => JSON.stringify(r)).join('\n')}\n`
    bytes += Buffer.byteLength(text)
    writeFileSync(path.join(dir, `${s.sessionId}.jsonl`), text)
  }
  return { sessions, bytes }
}
