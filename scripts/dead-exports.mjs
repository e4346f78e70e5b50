// Lists the exports of production code (src/, tests aside) that nothing imports and that are not public API.
// Run: node scripts/dead-exports.mjs [--list] [--check]   (--check: exit 1 when any, listing them; `npm run lint` runs it)
//
// Public API: everything the root entry src/index.ts exports (followed through re-exports). Used: named by an import
// or re-export anywhere the TypeScript programs see (src/ with its tests, src/viewer, test/agents), by a
// `import('…')` whose result is destructured or read by property, or by a script (scripts/*.mjs, examples/*.mjs)
// importing the built file from dist/. A namespace import or an unread dynamic import uses every export of its module.
// Prints the count, and with --list one line per dead export: `file:line name`, plus `(unused in its own file too)`
// when no other identifier of the file names it. Exports kept on purpose are listed in KEEP with their reason and
// counted apart; a KEEP entry that names no dead export is reported as stale (exit 1), so the list cannot rot.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import ts from 'typescript'

const ROOT = path.resolve(import.meta.dirname, '..')

/** `file:name` → why the export stays although nothing imports it. */
const KEEP = new Map([
  // `interface Store extends EventLog, DerivedReads, SearchIndex, …`: the other parts are imported by name.
  ['src/storage/store.ts:EventLog', 'a part of the Store port, cited by the dialects (`See EventLog.append`)'],
  ['src/storage/store.ts:DerivedReads', 'a part of the Store port, cited by the dialects (`See DerivedReads.recordUsage`)'],
  ['src/storage/store.ts:StoreAdmin', 'a part of the Store port, cited by the dialects (`See StoreAdmin.stats`)'],
])
const rel = (file) => path.relative(ROOT, file).split(path.sep).join('/')
const isTest = (file) => /\.test\.ts$/.test(file) || /^src\/testing\//.test(rel(file))

/** Exported declarations of a production file: name → its declaration node (local declarations, not re-exports). */
const exportsOf = new Map()
/** `file:name` of every export something uses. */
const used = new Set()
/** Files whose every export is used (namespace imports, unread dynamic imports). */
const wholeModules = new Set()

function program(configFile) {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(ROOT, configFile),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic() {} },
  )
  return ts.createProgram(config.fileNames, config.options)
}

function targetOf(checker, symbol) {
  let s = symbol
  while (s && s.flags & ts.SymbolFlags.Alias) s = checker.getAliasedSymbol(s)
  const decl = s?.declarations?.[0]
  return decl === undefined ? undefined : { file: rel(decl.getSourceFile().fileName), name: s.name }
}

function markSymbol(checker, symbol) {
  const t = targetOf(checker, symbol)
  if (t) used.add(`${t.file}:${t.name}`)
}

function moduleFileOf(checker, specifier) {
  const sym = checker.getSymbolAtLocation(specifier)
  const decl = sym?.declarations?.[0]
  return decl && ts.isSourceFile(decl) ? decl : undefined
}

function scan(prog) {
  const checker = prog.getTypeChecker()
  for (const sf of prog.getSourceFiles()) {
    if (sf.isDeclarationFile || !rel(sf.fileName).match(/^(src|test)\//)) continue
    const file = rel(sf.fileName)
    if (file.startsWith('src/') && !isTest(sf.fileName) && !exportsOf.has(file)) {
      const mod = checker.getSymbolAtLocation(sf)
      const own = new Map()
      for (const e of mod ? checker.getExportsOfModule(mod) : []) {
        const decl = e.declarations?.[0]
        if (decl && decl.getSourceFile() === sf && !(e.flags & ts.SymbolFlags.Alias)) own.set(e.name, decl)
      }
      exportsOf.set(file, own)
    }
    const visit = (node) => {
      if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
        const target = node.moduleSpecifier && moduleFileOf(checker, node.moduleSpecifier)
        const clause = ts.isImportDeclaration(node) ? node.importClause : undefined
        if (ts.isExportDeclaration(node) && node.exportClause === undefined && target) {
          // export * from: its names are used where they are imported through this file; the root entry's are public.
          const sym = checker.getSymbolAtLocation(node.moduleSpecifier)
          if (sym) for (const e of checker.getExportsOfModule(sym)) reexportStars.push([file, e.name, checker, e])
        }
        if (clause?.namedBindings && ts.isNamespaceImport(clause.namedBindings) && target) wholeModules.add(rel(target.fileName))
        if (ts.isExportDeclaration(node) && node.exportClause && ts.isNamespaceExport(node.exportClause) && target)
          wholeModules.add(rel(target.fileName))
        const specs = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : []
        const reexports =
          ts.isExportDeclaration(node) && node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : []
        for (const spec of [...specs, ...reexports]) {
          const sym = checker.getSymbolAtLocation(spec.name)
          if (sym) markSymbol(checker, sym)
        }
        if (clause?.name) {
          const sym = checker.getSymbolAtLocation(clause.name)
          if (sym) markSymbol(checker, sym)
        }
      } else if (ts.isImportTypeNode(node)) {
        // typeof import('x').a, import('x').T: the qualifier's first name; a bare import('x') uses the whole module.
        const lit = ts.isLiteralTypeNode(node.argument) ? node.argument.literal : undefined
        const target = lit && ts.isStringLiteral(lit) ? moduleFileOf(checker, lit) : undefined
        let q = node.qualifier
        while (q && ts.isQualifiedName(q)) q = q.left
        if (target && q) used.add(`${rel(target.fileName)}:${q.text}`)
        else if (target) wholeModules.add(rel(target.fileName))
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const arg = node.arguments[0]
        const target = arg && ts.isStringLiteral(arg) ? moduleFileOf(checker, arg) : undefined
        if (target) dynamicImport(node, rel(target.fileName))
      }
      ts.forEachChild(node, visit)
    }
    visit(sf)
  }
}

/** `const { a, b } = await import('x')` and `(await import('x')).a` use a and b; anything else uses the whole module. */
function dynamicImport(call, target) {
  let node = call.parent
  if (node && ts.isAwaitExpression(node)) node = node.parent
  while (node && ts.isParenthesizedExpression(node)) node = node.parent
  if (node && ts.isVariableDeclaration(node) && ts.isObjectBindingPattern(node.name)) {
    for (const el of node.name.elements) used.add(`${target}:${(el.propertyName ?? el.name).getText()}`)
    return
  }
  if (node && ts.isPropertyAccessExpression(node)) {
    used.add(`${target}:${node.name.text}`)
    return
  }
  if (node && ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)) {
    // const m = await import('x'): every m.<name> in the file.
    const name = node.name.text
    const sf = node.getSourceFile()
    let plain = false
    const walk = (n) => {
      if (ts.isIdentifier(n) && n.text === name && n !== node.name) {
        if (ts.isPropertyAccessExpression(n.parent) && n.parent.expression === n) used.add(`${target}:${n.parent.name.text}`)
        else plain = true
      }
      ts.forEachChild(n, walk)
    }
    walk(sf)
    if (!plain) return
  }
  wholeModules.add(target)
}

const reexportStars = []
for (const config of ['tsconfig.json', 'src/viewer/tsconfig.json', 'test/agents/tsconfig.json']) scan(program(config))

// `export *` re-exports: a name is used when imported through the re-exporting file, public when that file is the root.
const publicNames = new Set()
for (const [file, name, checker, symbol] of reexportStars) {
  const t = targetOf(checker, symbol)
  if (!t) continue
  if (file === 'src/index.ts' || used.has(`${file}:${name}`)) used.add(`${t.file}:${t.name}`)
}
{
  const prog = program('tsconfig.json')
  const checker = prog.getTypeChecker()
  const index = prog.getSourceFile(path.join(ROOT, 'src/index.ts'))
  const mod = index && checker.getSymbolAtLocation(index)
  for (const e of mod ? checker.getExportsOfModule(mod) : []) {
    const t = targetOf(checker, e)
    if (t) publicNames.add(`${t.file}:${t.name}`)
  }
}

// Scripts and examples import the built files: `import { a } from '../dist/x/y.js'`, or
// `const { a } = await import(path.join(ROOT, 'dist/x/y.js'))` / `await import(dist('x/y.js'))`, use a of src/x/y.ts.
const srcOf = (spec) => {
  const file = `src/${spec.replace(/^(?:\.\.?\/)*(?:dist\/)?/, '')}.ts`
  return existsSync(path.join(ROOT, file)) ? file : undefined
}
const names = (list) =>
  list.split(',').map(
    (p) =>
      p
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+|\s*:\s*/)[0],
  )
for (const dir of ['scripts', 'scripts/bench', 'examples']) {
  let files = []
  try {
    files = readdirSync(path.join(ROOT, dir)).filter((n) => /\.(mjs|js)$/.test(n))
  } catch {
    continue
  }
  for (const n of files) {
    const text = readFileSync(path.join(ROOT, dir, n), 'utf8')
    for (const m of text.matchAll(/import\s*(?:\{([^}]*)\}|\*\s+as\s+\w+|\w+)\s*from\s*['"]([^'"]+)\.js['"]/g)) {
      const target = srcOf(m[2])
      if (target === undefined) continue
      if (m[1] === undefined) wholeModules.add(target)
      else for (const name of names(m[1])) used.add(`${target}:${name}`)
    }
    for (const m of text.matchAll(/(?:const\s*\{([^}]*)\}\s*=\s*)?await\s+import\(([^()]*(?:\([^()]*\))?[^()]*)\)/g)) {
      const spec = /['"]([^'"]+)\.js['"]/.exec(m[2])?.[1]
      const target = spec === undefined ? undefined : srcOf(spec)
      if (target === undefined) continue
      if (m[1] === undefined) wholeModules.add(target)
      else for (const name of names(m[1])) used.add(`${target}:${name}`)
    }
  }
}

const dead = []
for (const [file, own] of exportsOf) {
  if (wholeModules.has(file)) continue
  for (const [name, decl] of own) {
    const key = `${file}:${name}`
    if (used.has(key) || publicNames.has(key) || name === 'default') continue
    const sf = decl.getSourceFile()
    let refs = 0
    const walk = (n) => {
      if (ts.isIdentifier(n) && n.text === name && !(n.parent && n.parent.name === n && n.parent === decl)) refs++
      ts.forEachChild(n, walk)
    }
    walk(sf)
    const line = sf.getLineAndCharacterOfPosition(decl.getStart()).line + 1
    const type = ts.isInterfaceDeclaration(decl) || ts.isTypeAliasDeclaration(decl)
    dead.push({ file, line, name, type, unusedInFile: refs === 0 })
  }
}
dead.sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1))
const kept = dead.filter((d) => KEEP.has(`${d.file}:${d.name}`))
const stale = [...KEEP.keys()].filter((key) => !kept.some((d) => `${d.file}:${d.name}` === key))
const listed = dead.filter((d) => !KEEP.has(`${d.file}:${d.name}`))
const unusedInFile = listed.filter((d) => d.unusedInFile).length
const types = listed.filter((d) => d.type).length
console.log(
  `dead exports: ${listed.length} (${listed.length - types} values, ${types} types; ${unusedInFile} unused in their own file too); ` +
    `${kept.length} kept on purpose (KEEP in scripts/dead-exports.mjs)`,
)
const check = process.argv.includes('--check')
if (check && listed.length > 0) process.exitCode = 1
if (process.argv.includes('--list') || (check && listed.length > 0)) {
  for (const d of listed)
    console.log(`${d.file}:${d.line} ${d.type ? 'type ' : ''}${d.name}${d.unusedInFile ? ' (unused in its own file too)' : ''}`)
  for (const d of kept) console.log(`kept: ${d.file}:${d.line} ${d.name}: ${KEEP.get(`${d.file}:${d.name}`)}`)
}
for (const key of stale) console.log(`stale KEEP entry (no dead export of that name): ${key}`)
if (stale.length > 0) process.exitCode = 1
