/**
 * The public-API guard: the package's root entry (package.json `exports`) exports exactly the names the README's
 * library table documents, each of the kind it says, and pulls in none of the code only the CLI and the other
 * surfaces use. Two views of "pulls in": the static import graph of its sources (src/testing/import-graph.ts, the
 * parser the architecture test uses), lazy `import()`s included; and the files a program importing the built package
 * by name loads while it runs the main entry points (src/testing/module-loads.ts, the recorder the start-up graph
 * test uses).
 */
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import ts from 'typescript'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { collectImports, type ImportEdge, importsOf, reachableImports } from './testing/import-graph.js'
import { runRecordingLoads } from './testing/module-loads.js'
import { tempDir } from './testing/test-mnemo.js'

const ROOT = path.resolve(import.meta.dirname, '..')

/** Source folders of the surfaces, which the library must not load: the CLI (with `connect/`), hooks, MCP, HTTP, the viewer, the benchmarks. */
const SURFACE_FOLDERS = ['adapters/', 'viewer/', 'bench/'] as const
/** Packages only those surfaces use: the CLI parser, the MCP SDK, the HTTP server, the agents' config file editors. */
const SURFACE_PACKAGES = ['commander', '@modelcontextprotocol/sdk', 'hono', '@hono/node-server', 'smol-toml', 'jsonc-parser'] as const

/** Why an import of the library's graph is one the library must not make, or undefined when it may. */
function surfaceOnly(edge: ImportEdge): string | undefined {
  if (edge.external) return (SURFACE_PACKAGES as readonly string[]).includes(edge.to) ? `package ${edge.to}` : undefined
  const folder = SURFACE_FOLDERS.find((f) => edge.to.startsWith(`src/${f}`))
  return folder === undefined ? undefined : `src/${folder}`
}

/** The files of a recorded run (`dist/…`, `node_modules/…`) that belong to a surface, not the library. */
function surfaceFilesLoaded(files: readonly string[]): string[] {
  return files.filter(
    (f) =>
      SURFACE_FOLDERS.some((folder) => f.startsWith(`dist/${folder}`)) || SURFACE_PACKAGES.some((p) => f.startsWith(`node_modules/${p}/`)),
  )
}

/** The root entry package.json names (`exports["."]`, else `main`), and the source file it is built from. */
function rootEntry(): { built: string; source: string } {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    name: string
    main?: string
    exports?: { '.': { default?: string; import?: string } | string }
  }
  const dot = pkg.exports?.['.']
  const built = path.posix.normalize((typeof dot === 'string' ? dot : (dot?.import ?? dot?.default)) ?? pkg.main ?? 'index.js')
  const source = built.replace(/^dist\//, 'src/').replace(/\.js$/, '.ts')
  return { built, source }
}

/** A documented export: its name and the kind the table gives (`function`, `class`, `constant`, `type`). */
interface DocumentedExport {
  name: string
  kind: 'function' | 'class' | 'constant' | 'type'
}

/**
 * The exports the README's library table documents: each row of the table under "As a library" (up to the next
 * heading) names one or more exports in backticks in its first cell and their kind in its second (`types` for a
 * row of types).
 */
function documentedExports(readme: string): DocumentedExport[] {
  const start = readme.indexOf('\nAs a library:')
  if (start < 0) throw new Error('README.md has no "As a library:" section')
  const end = readme.indexOf('\n#', start + 1)
  const section = readme.slice(start, end < 0 ? undefined : end)
  const out: DocumentedExport[] = []
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim())
    // A row is `| names | kind | what |`: cells[0] is the text before the first bar.
    if (cells.length < 4 || cells[0] !== '' || cells[1] === 'export' || /^-+$/.test(cells[1] ?? '')) continue
    const kind = cells[2] === 'types' ? 'type' : cells[2]
    if (kind !== 'function' && kind !== 'class' && kind !== 'constant' && kind !== 'type')
      throw new Error(`README.md library table: unknown kind ${cells[2]} in ${line}`)
    for (const [, name] of (cells[1] ?? '').matchAll(/`([A-Za-z_$][\w$]*)/g)) out.push({ name: name!, kind })
  }
  return out
}

/** Every name the source entry exports, values and types, as the compiler sees them (re-exports followed). */
function compiledExports(source: string): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'))
      },
    },
  )
  if (!config) throw new Error('tsconfig.json could not be read')
  const program = ts.createProgram([path.join(ROOT, source)], config.options)
  const file = program.getSourceFile(path.join(ROOT, source))
  const symbol = file && program.getTypeChecker().getSymbolAtLocation(file)
  if (!symbol) throw new Error(`${source} is not a module`)
  return program
    .getTypeChecker()
    .getExportsOfModule(symbol)
    .map((s) => s.name)
    .sort()
}

const sorted = (names: Iterable<string>): string[] => [...new Set(names)].sort()

describe('the public API (the root entry)', () => {
  const entry = rootEntry()
  const documented = documentedExports(readFileSync(path.join(ROOT, 'README.md'), 'utf8'))
  const cleanups: (() => void)[] = []
  afterEach(() => {
    while (cleanups.length > 0) cleanups.pop()!()
  })
  beforeAll(() => {
    if (!existsSync(path.join(ROOT, entry.built))) throw new Error(`${entry.built} is missing: run \`npm run build\` first (npm test does)`)
  })

  it('package.json names the built index, built from src/index.ts', () => {
    expect(entry).toEqual({ built: 'dist/index.js', source: 'src/index.ts' })
  })

  it('the README documents every export once, and only names the entry exports (values and types)', () => {
    const names = documented.map((d) => d.name)
    expect(names.length, 'the library table has rows').toBeGreaterThan(20)
    expect(
      names.filter((n, i) => names.indexOf(n) !== i),
      'documented twice',
    ).toEqual([])
    // Both ways: an export the table lacks shows up as missing from the left, a name the entry does not export as extra.
    expect(sorted(names), 'README.md "As a library" table against the exports of src/index.ts').toEqual(compiledExports(entry.source))
  })

  it('imported by name, it exports the documented values, each of its kind, and loads no surface code while it runs', () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    // The main entry points, so what they load lazily (recall's channels, the date parser, facts) is loaded too.
    const program = `
      const m = await import('mnemo')
      const kindOf = (v) => typeof v !== 'function' ? 'constant' : /^class\\b/.test(Function.prototype.toString.call(v)) ? 'class' : 'function'
      const kinds = Object.fromEntries(Object.entries(m).map(([k, v]) => [k, kindOf(v)]))
      const mnemo = m.openMnemo({ cwd: '/work/acme-api' })
      try {
        await mnemo.engine.remember('orders DB is PostgreSQL 14', { kind: 'fact' })
        const hits = await mnemo.engine.recall('what did we say about the orders database last week?')
        await mnemo.engine.context({ budgetTokens: 400 })
        await mnemo.engine.facts.add('expenses', [{ category: 'food', amount: 12 }, { category: 'rent', amount: 900 }])
        const answer = await mnemo.engine.facts.query('from expenses where category = "food" sum amount')
        console.log(JSON.stringify({ kinds, hits: hits.length, answer: m.answerValueText(answer) }))
      } finally {
        await mnemo.close()
      }`
    const r = runRecordingLoads(['--input-type=module', '--eval', program], {
      root: ROOT,
      logDir: t.dir,
      env: { PATH: process.env['PATH'], HOME: t.dir, MNEMO_HOME: path.join(t.dir, 'home') },
    })
    expect(r.stderr.replace(/^MODULE \d+: .*\n/gm, '')).toBe('')
    expect(r.code).toBe(0)
    const out = JSON.parse(r.stdout) as { kinds: Record<string, DocumentedExport['kind']>; hits: number; answer: string }
    expect(out.hits).toBeGreaterThan(0)
    expect(out.answer).toBe('12')
    const values = Object.fromEntries(documented.filter((d) => d.kind !== 'type').map((d) => [d.name, d.kind]))
    expect(out.kinds, 'the values the built package exports, by kind, against the README table').toEqual(values)
    // The run loaded the library for real (the engine and the store's driver), and nothing of a surface.
    expect(r.files).toContain('dist/engine/mnemo.js')
    expect(r.files.some((f) => f.startsWith('node_modules/better-sqlite3/'))).toBe(true)
    expect(surfaceFilesLoaded(r.files), 'surface code loaded by a program that imports mnemo').toEqual([])
  })

  it('its static import graph, lazy imports included, reaches no surface folder or surface-only package', () => {
    const reached = reachableImports(collectImports(ROOT), entry.source, { dynamic: true })
    expect(reached.some((e) => e.to === 'src/engine/mnemo.ts')).toBe(true)
    expect(
      reached.some((e) => e.dynamic && e.to === 'src/engine/recall.ts'),
      'lazy imports are followed',
    ).toBe(true)
    const bad = reached.filter((e) => surfaceOnly(e) !== undefined).map((e) => `${e.from}:${e.line} → ${e.to} (${surfaceOnly(e)})`)
    expect(bad, 'imports reachable from the root entry that only a surface may make').toEqual([])
  })
})

describe('the guard catches what it must', () => {
  const files = new Set([
    'src/index.ts',
    'src/engine/mnemo.ts',
    'src/engine/recall.ts',
    'src/adapters/cli/output.ts',
    'src/viewer/main.tsx',
  ])
  const graph = (texts: Record<string, string>): ImportEdge[] =>
    Object.entries(texts).flatMap(([file, text]) => importsOf(file, text, files))

  it('a surface module or package reached statically, or lazily further down, is found; one no import reaches is not', () => {
    const edges = graph({
      'src/index.ts': "export { MnemoEngine } from './engine/mnemo.js'",
      'src/engine/mnemo.ts': "import 'zod'\nconst later = () => import('./recall.js')",
      'src/engine/recall.ts': "import { Command } from 'commander'\nimport '../adapters/cli/output.js'",
      'src/viewer/main.tsx': "import '../engine/mnemo.js'",
    })
    const found = (dynamic: boolean) =>
      reachableImports(edges, 'src/index.ts', { dynamic })
        .map(surfaceOnly)
        .filter((r) => r !== undefined)
    expect(found(true)).toEqual(['package commander', 'src/adapters/'])
    expect(found(false), 'without following lazy imports, recall.ts is not reached').toEqual([])
  })

  it('names the files of a run that belong to a surface', () => {
    expect(
      surfaceFilesLoaded([
        'dist/engine/mnemo.js',
        'dist/adapters/cli/program.js',
        'dist/viewer/index.html',
        'node_modules/hono/dist/index.js',
        'node_modules/honest/index.js',
        'node_modules/zod/index.js',
      ]),
    ).toEqual(['dist/adapters/cli/program.js', 'dist/viewer/index.html', 'node_modules/hono/dist/index.js'])
  })

  it('reads the README table: names and kinds, a row of types, and refuses an unknown kind', () => {
    const readme = [
      '## x',
      'As a library:',
      '',
      '| export | kind | what it is |',
      '| --- | --- | --- |',
      '| `openMnemo` | function | Opens mnemo: `{ engine }`. |',
      '| `A`, `B` | types | Two types. |',
      '### Next',
      '| `Later` | function | not in the section |',
    ].join('\n')
    expect(documentedExports(readme)).toEqual([
      { name: 'openMnemo', kind: 'function' },
      { name: 'A', kind: 'type' },
      { name: 'B', kind: 'type' },
    ])
    expect(() => documentedExports(readme.replace('| types |', '| widgets |'))).toThrow(/unknown kind widgets/)
  })
})
