/**
 * The layer rules of ARCHITECTURE.md as code: every import of the production sources in `src/` (static
 * `import … from`, `export … from`, `import type`, and dynamic `import('…')`, read with the TypeScript compiler's
 * own pre-processor, not a regex: `src/testing/import-graph.ts`) is resolved to a file or a package and checked
 * against the rules below.
 *
 * Layers, lowest first; a file may import its own layer or one below it:
 *   core · storage · providers · capture · retrieval · lifecycle · context · engine · config · runtime · bench · adapters
 * (`bench/` is the benchmark harnesses `mnemo bench` and the benchmark scripts run; `src/index.ts` is the library adapter.)
 *
 * Rules (the name in brackets is the one a violation carries):
 * - [upward] no import of a higher layer.
 * - [sibling] the folders inside a layer (`adapters/cli`, `adapters/http`, `storage/sqlite`, …) do not import each
 *   other; a folder may import its layer's top-level files (`storage/store.ts`, the port), which are the layer's
 *   shared part, and those files import no folder of their layer.
 * - [engine-bypass] adapters call the engine: none imports storage, providers, capture, retrieval, lifecycle or
 *   context (core's types, errors and schemas, config and runtime are theirs to use).
 * - [driver] a dialect's driver (`better-sqlite3`, `pg`) is imported only inside its storage folder.
 * - [impure] core and retrieval import no Node built-in (`node:fs`, …).
 * - [test-support] production code imports no test support: no test file, nothing in {@link TEST_SUPPORT}.
 * - [viewer] the viewer (`src/viewer/`) is a browser app of its own: it and the rest import nothing of each other.
 * - [unmapped] every file lives in a known layer: a new top-level folder is placed here first.
 *
 * Test support (test files and {@link TEST_SUPPORT}) may import anything: it sets up what it tests.
 * Deliberate exceptions live in {@link EXCEPTIONS}, each with its reason.
 */
import { builtinModules } from 'node:module'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { collectImports, type ImportEdge, importsOf } from './testing/import-graph.js'

/** The layers, lowest first (ARCHITECTURE.md, "Layers"). */
const LAYERS = [
  'core',
  'storage',
  'providers',
  'capture',
  'retrieval',
  'lifecycle',
  'context',
  'engine',
  'config',
  'runtime',
  'bench',
  'adapters',
] as const
type Layer = (typeof LAYERS)[number]

/** Layers below the engine that adapters must reach through it (ARCHITECTURE.md rule 3). */
const BELOW_ENGINE: ReadonlySet<Layer> = new Set(['storage', 'providers', 'capture', 'retrieval', 'lifecycle', 'context'])

/** Layers that stay pure (ARCHITECTURE.md rule 1): no Node built-in. */
const PURE: ReadonlySet<Layer> = new Set(['core', 'retrieval'])

/** Each dialect's driver package and the one folder that may import it (ARCHITECTURE.md rule 4). */
const DRIVERS: Readonly<Record<string, string>> = {
  'better-sqlite3': 'src/storage/sqlite/',
  pg: 'src/storage/postgres/',
}

type Rule = 'upward' | 'sibling' | 'engine-bypass' | 'driver' | 'impure' | 'test-support' | 'viewer' | 'unmapped'

interface Violation {
  readonly from: string
  readonly to: string
  readonly rule: Rule
  /** True when every import of `to` in `from` is dynamic. */
  readonly dynamic: boolean
}

interface Exception {
  readonly from: string
  readonly to: string
  readonly rule: Rule
  /** Why this import stays. */
  readonly reason: string
  /** Only dynamic imports are excepted: a static import of the same file is still a violation. */
  readonly dynamicOnly?: boolean
}

/**
 * The deliberate exceptions, each with its reason: the only imports that break a rule and stay.
 * An exception that no longer matches an import fails the test, so this list cannot go stale.
 */
const EXCEPTIONS: readonly Exception[] = [
  // The `mnemo` executable is the one entry of every surface: the CLI starts the hook runner, the stdio MCP server and
  // the HTTP server for `mnemo hook`, `mnemo mcp` and `mnemo serve`. Each launch is a dynamic import, so a process
  // loads only the surface it runs (an agent starts a hook process per event: start-up time is latency it feels).
  {
    from: 'src/adapters/cli/hook-entry.ts',
    to: 'src/adapters/hooks/run-hook.ts',
    rule: 'sibling',
    reason: '`mnemo hook <event>` launches the hook runner (its bundle when built) on the fast path, before the CLI loads',
    dynamicOnly: true,
  },
  {
    from: 'src/adapters/cli/hook-entry.ts',
    to: 'src/adapters/hooks/deferred-capture.ts',
    rule: 'sibling',
    reason: '`mnemo hook <event>` first tries the deferred capture of a tool event (its bundle when built), before the hook runner',
    dynamicOnly: true,
  },
  {
    from: 'src/adapters/cli/agent-commands.ts',
    to: 'src/adapters/mcp/server.ts',
    rule: 'sibling',
    reason: '`mnemo mcp` launches the MCP server on stdio',
    dynamicOnly: true,
  },
  {
    from: 'src/adapters/cli/server-commands.ts',
    to: 'src/adapters/http/server.ts',
    rule: 'sibling',
    reason: '`mnemo serve` launches the HTTP server (REST, MCP over HTTP, the viewer)',
    dynamicOnly: true,
  },
  {
    from: 'src/capture/cursor-db.ts',
    to: 'better-sqlite3',
    rule: 'driver',
    reason:
      "importing from Cursor reads Cursor's own state.vscdb, a SQLite file of another program opened read-only: a " +
      "capture format, not mnemo's store, and it must work whichever dialect the store uses",
  },
  {
    from: 'src/adapters/http/mcp-endpoint.ts',
    to: 'src/adapters/mcp/mcp-server.ts',
    rule: 'sibling',
    reason:
      'the HTTP server hosts the MCP adapter at /mcp (streamable HTTP) beside REST: it mounts the same tool set the stdio ' +
      'server serves, which is the MCP adapter own code; MCP never imports HTTP',
  },
]

/**
 * Folders of code that only tests run: the test helpers, and the store contract suite that runs every dialect
 * against the same tests (ARCHITECTURE.md, `storage/`), which must open each dialect and drive the engine.
 */
const TEST_SUPPORT: readonly string[] = ['src/testing/', 'src/storage/contract/']

const isTestSupport = (file: string): boolean => /\.test\.tsx?$/.test(file) || TEST_SUPPORT.some((folder) => file.startsWith(folder))

/** Where a source file sits: its layer (or the viewer) and the folder inside the layer ('' = top level). */
function placeOf(file: string): { layer: Layer | 'viewer'; module: string } | undefined {
  if (file === 'src/index.ts') return { layer: 'adapters', module: 'library' }
  const parts = file.split('/')
  if (parts[0] !== 'src' || parts.length < 3) return undefined
  const top = parts[1] as string
  const module = parts.length > 3 ? (parts[2] as string) : ''
  if (top === 'viewer') return { layer: top, module }
  return (LAYERS as readonly string[]).includes(top) ? { layer: top as Layer, module } : undefined
}

const NODE_BUILTINS: ReadonlySet<string> = new Set(builtinModules)
const isNodeBuiltin = (name: string): boolean => name.startsWith('node:') || NODE_BUILTINS.has(name)

/** The rules one import breaks (none for tests and test support, which may import anything). */
function rulesBroken(edge: ImportEdge): Rule[] {
  if (isTestSupport(edge.from)) return []
  const from = placeOf(edge.from)
  if (!from) return ['unmapped']
  if (edge.external) {
    const broken: Rule[] = []
    const driverHome = DRIVERS[edge.to]
    if (driverHome !== undefined && !edge.from.startsWith(driverHome)) broken.push('driver')
    if (from.layer !== 'viewer' && PURE.has(from.layer) && isNodeBuiltin(edge.to)) broken.push('impure')
    return broken
  }
  if (isTestSupport(edge.to)) return ['test-support']
  const to = placeOf(edge.to)
  if (!to) return ['unmapped']
  if (from.layer === 'viewer' || to.layer === 'viewer') return from.layer === to.layer ? [] : ['viewer']
  const fromRank = LAYERS.indexOf(from.layer)
  const toRank = LAYERS.indexOf(to.layer)
  if (toRank > fromRank) return ['upward']
  if (toRank === fromRank) return to.module !== '' && to.module !== from.module ? ['sibling'] : []
  return from.layer === 'adapters' && BELOW_ENGINE.has(to.layer) ? ['engine-bypass'] : []
}

/** Every rule each import breaks, one entry per (from, to, rule) however often the import is written. */
function checkImports(edges: readonly ImportEdge[]): Violation[] {
  const seen = new Map<string, Violation>()
  for (const edge of edges) {
    for (const rule of rulesBroken(edge)) {
      const key = formatViolation({ from: edge.from, to: edge.to, rule })
      const dynamic = edge.dynamic && (seen.get(key)?.dynamic ?? true)
      seen.set(key, { from: edge.from, to: edge.to, rule, dynamic })
    }
  }
  return [...seen.values()]
}

const formatViolation = (v: Pick<Violation, 'from' | 'to' | 'rule'>): string => `${v.from} → ${v.to} (${v.rule})`

/** True when `exception` covers `violation`: the same import and rule, and dynamic if it must be. */
const excepts = (exception: Exception, violation: Violation): boolean =>
  formatViolation(exception) === formatViolation(violation) && (!exception.dynamicOnly || violation.dynamic)

const REPO = path.resolve(import.meta.dirname, '..')

describe('architecture (ARCHITECTURE.md layer rules)', () => {
  const edges = collectImports(REPO)
  const production = edges.filter((e) => !e.external && !isTestSupport(e.from))
  const violations = checkImports(edges)

  it(`the ${production.length} internal imports of production code break no rule beyond the ${EXCEPTIONS.length} listed exceptions`, () => {
    const remaining = violations
      .filter((v) => !EXCEPTIONS.some((exception) => excepts(exception, v)))
      .map(formatViolation)
      .sort()
    // A failure here lists each import that breaks a rule: move the code where it belongs (ARCHITECTURE.md), or, when
    // the import is deliberate, list it in EXCEPTIONS with its reason.
    expect(remaining, 'imports that break the layer rules (src/architecture.test.ts)').toEqual([])
  })

  it('every deliberate exception still matches an import and gives its reason', () => {
    for (const exception of EXCEPTIONS) {
      expect(
        violations.some((v) => excepts(exception, v)),
        `${formatViolation(exception)} is listed in EXCEPTIONS but no import matches it${exception.dynamicOnly ? ' (it excepts dynamic imports only)' : ''}`,
      ).toBe(true)
      expect(exception.reason.length).toBeGreaterThan(20)
    }
  })

  it('the checker sees a sample of imports it must see', () => {
    // Static imports, type imports, re-exports and dynamic imports each appear in the tree; a parser that missed
    // one kind would pass on a tree that breaks the rules.
    const has = (from: string, to: string) => edges.some((e) => e.from === from && e.to === to)
    expect(has('src/storage/sqlite/sqlite-db.ts', 'better-sqlite3')).toBe(true)
    expect(has('src/index.ts', 'src/engine/mnemo.ts')).toBe(true)
    expect(edges.some((e) => e.from === 'src/adapters/cli/main.ts' && e.dynamic)).toBe(true)
    expect(production.length).toBeGreaterThan(500)
  })
})

describe('the rules catch a planted violation of each kind', () => {
  const files = new Set([
    'src/core/types.ts',
    'src/core/facts/fact-types.ts',
    'src/storage/store.ts',
    'src/storage/sqlite/sqlite-store.ts',
    'src/storage/postgres/pg-store.ts',
    'src/capture/redact.ts',
    'src/retrieval/fusion.ts',
    'src/engine/mnemo.ts',
    'src/runtime/open-mnemo.ts',
    'src/adapters/cli/program.ts',
    'src/adapters/http/server.ts',
    'src/adapters/mcp/server.ts',
    'src/testing/scratch.ts',
    'src/storage/contract/dialects.ts',
    'src/viewer/ui/app.tsx',
    'src/viewer/main.tsx',
    'src/engine/mnemo.test.ts',
    'src/stray/thing.ts',
  ])
  const check = (file: string, text: string): string[] => checkImports(importsOf(file, text, files)).map(formatViolation)

  it('reads static, type-only, re-export and dynamic imports, and resolves `.js` to `.ts`', () => {
    const text = [
      "import { a } from '../../core/types.js'",
      "import type { B } from '../store.js'",
      "export { c } from '../../retrieval/fusion.js'",
      "export * from '../../capture/redact.js'",
      'const d = await import("../../engine/mnemo.js")',
      "import Database from 'better-sqlite3'",
      "import { z } from 'zod/v4'",
    ].join('\n')
    const edges = importsOf('src/storage/sqlite/sqlite-store.ts', text, files)
    expect(edges.map((e) => [e.to, e.external, e.line, e.dynamic])).toEqual([
      ['src/core/types.ts', false, 1, false],
      ['src/storage/store.ts', false, 2, false],
      ['src/retrieval/fusion.ts', false, 3, false],
      ['src/capture/redact.ts', false, 4, false],
      ['src/engine/mnemo.ts', false, 5, true],
      ['better-sqlite3', true, 6, false],
      ['zod', true, 7, false],
    ])
    expect(() => importsOf('src/core/types.ts', "import './missing.js'", files)).toThrow(/names no file/)
  })

  it('an exception for dynamic imports only covers a lazy import, not a static one of the same file', () => {
    const launch: Exception = {
      from: 'src/adapters/cli/program.ts',
      to: 'src/adapters/http/server.ts',
      rule: 'sibling',
      reason: 'a planted exception for this test',
      dynamicOnly: true,
    }
    const covered = (text: string) => checkImports(importsOf(launch.from, text, files)).map((v) => excepts(launch, v))
    expect(covered("const { start } = await import('../http/server.js')")).toEqual([true])
    expect(covered("import '../http/server.js'\nconst later = () => import('../http/server.js')")).toEqual([false])
    expect(covered("const { start } = await import('../mcp/server.js')")).toEqual([false])
  })

  it('allows downward imports, a folder importing its layer top level, and tests importing anything', () => {
    expect(
      check('src/storage/sqlite/sqlite-store.ts', "import '../store.js'\nimport '../../core/types.js'\nimport 'better-sqlite3'"),
    ).toEqual([])
    expect(check('src/adapters/cli/program.ts', "import '../../engine/mnemo.js'\nimport '../../runtime/open-mnemo.js'")).toEqual([])
    expect(check('src/core/facts/fact-types.ts', "import '../types.js'")).toEqual([])
    expect(check('src/engine/mnemo.test.ts', "import '../storage/sqlite/sqlite-store.js'\nimport '../testing/scratch.js'")).toEqual([])
    expect(check('src/storage/contract/dialects.ts', "import '../sqlite/sqlite-store.js'\nimport '../../engine/mnemo.js'")).toEqual([])
    expect(check('src/viewer/main.tsx', "import './ui/app.js'\nimport 'preact'")).toEqual([])
  })

  it.each([
    ['src/storage/store.ts', "import '../retrieval/fusion.js'", 'src/retrieval/fusion.ts', 'upward'],
    ['src/adapters/mcp/server.ts', "import '../http/server.js'", 'src/adapters/http/server.ts', 'sibling'],
    ['src/storage/sqlite/sqlite-store.ts', "import '../postgres/pg-store.js'", 'src/storage/postgres/pg-store.ts', 'sibling'],
    ['src/storage/store.ts', "import './sqlite/sqlite-store.js'", 'src/storage/sqlite/sqlite-store.ts', 'sibling'],
    ['src/adapters/http/server.ts', "import '../../capture/redact.js'", 'src/capture/redact.ts', 'engine-bypass'],
    [
      'src/adapters/cli/program.ts',
      "import('../../storage/sqlite/sqlite-store.js')",
      'src/storage/sqlite/sqlite-store.ts',
      'engine-bypass',
    ],
    ['src/capture/redact.ts', "import Database from 'better-sqlite3'", 'better-sqlite3', 'driver'],
    ['src/storage/sqlite/sqlite-store.ts', "import pg from 'pg'", 'pg', 'driver'],
    ['src/retrieval/fusion.ts', "import { readFileSync } from 'node:fs'", 'node:fs', 'impure'],
    ['src/core/types.ts', "import path from 'path'", 'path', 'impure'],
    ['src/engine/mnemo.ts', "import '../testing/scratch.js'", 'src/testing/scratch.ts', 'test-support'],
    ['src/engine/mnemo.ts', "import './mnemo.test.js'", 'src/engine/mnemo.test.ts', 'test-support'],
    ['src/storage/sqlite/sqlite-store.ts', "import '../contract/dialects.js'", 'src/storage/contract/dialects.ts', 'test-support'],
    ['src/viewer/ui/app.tsx', "import '../../core/types.js'", 'src/core/types.ts', 'viewer'],
    ['src/adapters/http/server.ts', "import '../../viewer/ui/app.js'", 'src/viewer/ui/app.tsx', 'viewer'],
    ['src/stray/thing.ts', "import '../core/types.js'", 'src/core/types.ts', 'unmapped'],
    ['src/core/types.ts', "import '../stray/thing.js'", 'src/stray/thing.ts', 'unmapped'],
  ])('%s with %s → %s (%s)', (from, text, to, rule) => {
    expect(check(from, text)).toEqual([`${from} → ${to} (${rule})`])
  })
})
