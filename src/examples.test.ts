import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

// Runs the library examples exactly as a user would: each imports 'mnemo' by package name (the built dist/).
const ROOT = path.resolve(import.meta.dirname, '..')

/** Runs an ES module's source with node from the repository root (so 'mnemo' resolves to this package), MNEMO_HOME a fresh folder. */
function runModule(source: string): { status: number | null; stdout: string; stderr: string } {
  const home = mkdtempSync(path.join(os.tmpdir(), 'mnemo-example-'))
  try {
    const r = spawnSync(process.execPath, ['--input-type=module', '--eval', source], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: home, MNEMO_HOME: home },
      timeout: 60_000,
    })
    return { status: r.status, stdout: r.stdout, stderr: r.stderr }
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}

/** One `@example` of a docstring: the exported name the docstring is on (or `module` for a file's header) and its code. */
interface DocExample {
  file: string
  name: string
  code: string
}

/**
 * The source files the root entry (src/index.ts) re-exports from, as repository paths, with the files declaring the
 * base classes of their classes (`MnemoEngine extends EngineReads`, whose methods are the public class's too).
 */
function publicFiles(): string[] {
  const index = readFileSync(path.join(ROOT, 'src/index.ts'), 'utf8')
  const files = [
    'src/index.ts',
    ...new Set([...index.matchAll(/from '(\.[^']+)\.js'/g)].map((m) => `src/${path.posix.normalize(m[1] ?? '')}.ts`)),
  ]
  for (let i = 1; i < files.length; i++) {
    const file = files[i]!
    const text = readFileSync(path.join(ROOT, file), 'utf8')
    for (const [, base] of text.matchAll(/^export class \w+ extends (\w+)/gm)) {
      const from = new RegExp(`^import \\{[^}]*\\b${base}\\b[^}]*\\} from '(\\.[^']+)\\.js'`, 'm').exec(text)?.[1]
      if (from === undefined) continue // a base declared in the file itself, or a global (`Error`)
      const resolved = path.posix.join(path.posix.dirname(file), `${from}.ts`)
      if (!files.includes(resolved)) files.push(resolved)
    }
  }
  return files
}

/** The `@example` blocks of a file's docstrings: text after the tag up to the next tag or the comment's end, ` * ` margins removed. */
function docExamples(file: string, text: string): DocExample[] {
  const out: DocExample[] = []
  const docstring =
    /\/\*\*([\s\S]*?)\*\/\s*(?:export\s+)?(?:async\s+)?(?:function\s+|class\s+|const\s+|let\s+|type\s+|interface\s+|static\s+)?(?:async\s+)?(\w+)?/g
  for (const m of text.matchAll(docstring)) {
    const lines = (m[1] ?? '').split('\n').map((l) => l.replace(/^\s*\* ?/, ''))
    // No declaration right after the comment (a re-export, another comment): the file's own docstring.
    const name = m[2] ?? 'module'
    for (let i = 0; i < lines.length; i++) {
      if (!/^@example\b/.test(lines[i] ?? '')) continue
      const body: string[] = []
      for (let j = i + 1; j < lines.length && !/^@\w/.test(lines[j] ?? ''); j++) body.push(lines[j] ?? '')
      out.push({ file, name, code: body.join('\n').trim() })
    }
  }
  return out
}

const EXAMPLES = publicFiles().flatMap((file) => docExamples(file, readFileSync(path.join(ROOT, file), 'utf8')))

describe('examples/library.mjs', () => {
  it('runs and prints the current fact, its history and a context block', () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'examples/library.mjs')], { cwd: ROOT, encoding: 'utf8' })
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout).toContain('fact    orders DB migrated to MySQL 8')
    expect(r.stdout).toContain('orders DB is PostgreSQL 14 (superseded)\norders DB migrated to MySQL 8 (current)')
    expect(r.stdout).toContain('<mnemo-context project="acme-api"')
  })
})

describe('@example blocks of the public API (the files src/index.ts exports from, and those declaring their classes’ bases)', () => {
  it('finds the examples of the main entry points', () => {
    const named = new Set(EXAMPLES.map((e) => e.name))
    const entryPoints = ['module', 'openMnemo', 'parseFactQuery', 'answerValueText', 'MnemoError']
    const engine = ['recall', 'remember', 'context', 'captureHook', 'forget', 'show', 'sessions', 'exportMarkdown', 'query']
    for (const name of [...entryPoints, ...engine]) expect(named, name).toContain(name)
  })

  it.each(EXAMPLES.map((e) => [`${e.file} ${e.name}`, e] as const))('%s runs as written, importing mnemo by name', (_label, e) => {
    expect(e.code, 'an example imports the package by its name').toMatch(/from 'mnemo'/)
    const r = runModule(e.code)
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    // `// → text` after a statement: what it prints, in order.
    const printed = r.stdout.split('\n')
    let at = 0
    for (const [, want] of e.code.matchAll(/\/\/ → (.+)$/gm)) {
      const found = printed.findIndex((line, i) => i >= at && line.trim() === want?.trim())
      expect(found, `prints ${want}`).toBeGreaterThanOrEqual(0)
      at = found + 1
    }
  })
})
