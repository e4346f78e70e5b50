/**
 * The import graph of the sources in `src/`, read with the TypeScript compiler's own pre-processor (not a regex):
 * static `import … from`, `export … from`, `import type`, and dynamic `import('…')`, each resolved to a file of the
 * repository or a package. The architecture test checks its edges against the layer rules; the public-API test
 * (`src/index.test.ts`) walks it from the root entry.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import ts from 'typescript'

/** One import: `from` is a source file (`src/…`, forward slashes); `to` is a source file or a package name. */
export interface ImportEdge {
  readonly from: string
  readonly to: string
  /** True when `to` is a package (or a Node built-in), not a file of this repository. */
  readonly external: boolean
  /** 1-based line of the import in `from`. */
  readonly line: number
  /** True for `import('…')`, loaded when the code runs rather than with the file. */
  readonly dynamic: boolean
}

/** The package a bare specifier names: `@scope/name/sub` → `@scope/name`, `hono/streaming` → `hono`. */
export function packageName(specifier: string): string {
  if (specifier.startsWith('node:')) return specifier
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string)
}

/**
 * The imports of one source text, resolved against the set of files that exist. A relative specifier resolves as
 * NodeNext and the viewer's bundler do it (`./x.js` → `x.ts` or `x.tsx`, `./x` → `x.ts`, `x.tsx`, `x/index.ts`);
 * one that names no existing file throws, naming it.
 */
export function importsOf(file: string, text: string, files: ReadonlySet<string>): ImportEdge[] {
  const info = ts.preProcessFile(text, true, true)
  const lineOf = (pos: number): number => text.slice(0, pos).split('\n').length
  // `pos` is the specifier's opening quote; a dynamic import has `import (` before it.
  const isDynamic = (pos: number): boolean => {
    const before = text.slice(Math.max(0, pos - 64), pos).trimEnd()
    return before.endsWith('(') && /(^|[^\w$.])import$/.test(before.slice(0, -1).trimEnd())
  }
  return info.importedFiles.map((ref) => {
    const specifier = ref.fileName
    const at = { line: lineOf(ref.pos), dynamic: isDynamic(ref.pos) }
    if (!specifier.startsWith('.')) return { from: file, to: packageName(specifier), external: true, ...at }
    const base = path.posix.join(path.posix.dirname(file), specifier)
    const stem = base.replace(/\.(m?js|jsx)$/, '')
    const candidates = [base, `${stem}.ts`, `${stem}.tsx`, `${stem}/index.ts`, `${stem}/index.tsx`]
    const to = candidates.find((c) => files.has(c))
    if (to === undefined) throw new Error(`${file}:${lineOf(ref.pos)}: import '${specifier}' names no file of src/`)
    return { from: file, to, external: false, ...at }
  })
}

/** Every `.ts`/`.tsx` file under `dir`, as repository-relative paths with forward slashes. */
export function sourceFiles(root: string, dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`
    if (entry.isDirectory()) return sourceFiles(root, relative)
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [relative] : []
  })
}

/** Every import of every source file of the repository at `root`. */
export function collectImports(root: string): ImportEdge[] {
  const files = sourceFiles(root, 'src')
  const known = new Set(files)
  return files.flatMap((file) => importsOf(file, readFileSync(path.join(root, file), 'utf8'), known))
}

/**
 * The edges reachable from `entry` (a source file) through imports of source files, each once, in breadth-first
 * order: what loading `entry` loads, and with `dynamic`, also what its lazy `import('…')`s load when they run.
 * Package edges are included (a package is a leaf: its own imports are not followed).
 */
export function reachableImports(edges: readonly ImportEdge[], entry: string, options: { dynamic: boolean }): ImportEdge[] {
  const byFile = new Map<string, ImportEdge[]>()
  for (const e of edges) byFile.set(e.from, [...(byFile.get(e.from) ?? []), e])
  const out: ImportEdge[] = []
  const seen = new Set([entry])
  const queue = [entry]
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const e of byFile.get(file) ?? []) {
      if (e.dynamic && !options.dynamic) continue
      out.push(e)
      if (!e.external && !seen.has(e.to)) {
        seen.add(e.to)
        queue.push(e.to)
      }
    }
  }
  return out
}
