import { readFileSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { runCli } from './program.js'

// Every `mnemo …` command mnemo names in what it prints or documents (hints, doctor fixes, connect notes,
// error messages, docstrings) must work as written once `mnemo` is on PATH (README: npm install -g .):
// its command and sub-command exist, and each --flag it names is one that command takes.

const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name)
    if (statSync(p).isDirectory()) return sources(p)
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [p] : []
  })
}

/** `mnemo <words…>` spans: in backticks, or a string that is a command (`'mnemo connect codex'`, `'run mnemo rebuild …'`). */
function namedCommands(): Map<string, string> {
  const out = new Map<string, string>()
  for (const file of sources(SRC)) {
    const text = readFileSync(file, 'utf8')
    const where = path.relative(SRC, file)
    // A backticked span (also as \`…\` inside a template string); `mnemo serve: …` log prefixes are not commands.
    for (const m of text.matchAll(/\\?`mnemo ([a-z][a-z-]*)((?: [^`\n\\]*)?)\\?`/g))
      out.set(`${m[1]!}${m[2]!}`.replace(/\$\{[^}]*\}/g, '<x>').trim(), where)
    for (const m of text.matchAll(/['"](run |start )?mnemo ([a-z][a-z-]*(?: [a-z][a-z-]*)*(?: --?[a-z][a-z-]*)*)(?=[ '",(;)])/g))
      out.set(`${m[1] === undefined ? '?' : ''}${m[2]!.trim()}`, where)
  }
  return out
}

async function help(argv: readonly string[]): Promise<{ code: number; text: string }> {
  let text = ''
  const io = {
    stdout: (s: string) => {
      text += s
    },
    stderr: (s: string) => {
      text += s
    },
    env: {},
    cwd: SRC,
  }
  const code = await runCli([...argv, '--help'], io)
  return { code, text }
}

/** The sub-command names listed under "Commands:" in a help text. */
const subcommands = (text: string): Set<string> =>
  new Set([...(text.split(/\nCommands:\n/)[1] ?? '').matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]!))

describe("commands named in mnemo's messages and docs", () => {
  const named = namedCommands()

  it('are found (the scan sees the doctor fixes and hints)', () => {
    expect(named.size).toBeGreaterThan(10)
    expect([...named.keys()].map((k) => k.replace(/^\?/, ''))).toEqual(expect.arrayContaining(['connect codex', 'rebuild']))
  })

  it('each name an existing command and only flags that command takes', async () => {
    const top = subcommands((await help([])).text)
    const bad: string[] = []
    for (const [cmd, where] of named) {
      // A quoted string that is not run as a command ('mnemo is misconfigured') counts only when it names a command.
      const prose = cmd.startsWith('?')
      const words = cmd.replace(/^\?/, '').split(/\s+/)
      if (!top.has(words[0]!)) {
        if (!prose) bad.push(`${where}: mnemo ${cmd} (no command "${words[0]}")`)
        continue
      }
      const argv = [words[0]!]
      let h = await help(argv)
      for (const w of words.slice(1)) {
        if (!/^[a-z][a-z-]*$/.test(w)) break
        if (subcommands(h.text).has(w)) {
          argv.push(w)
          h = await help(argv)
        }
      }
      for (const flag of words.filter((w) => /^--[a-z][a-z-]*$/.test(w))) {
        if (!new RegExp(`(^|[ ,])${flag}\\b`, 'm').test(h.text))
          bad.push(`${where}: mnemo ${cmd.replace(/^\?/, '')} (mnemo ${argv.join(' ')} takes no ${flag})`)
      }
    }
    expect(bad).toEqual([])
  })
})
