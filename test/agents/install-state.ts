import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** test/agents/: the suite's own folder, with its package.json, lockfile and node_modules. */
export const SUITE_DIR = dirname(fileURLToPath(import.meta.url))
/** The repository root. */
export const REPO_DIR = join(SUITE_DIR, '..', '..')

/** The four agent packages and the binary each installs in node_modules/.bin. */
export const AGENT_PACKAGES = [
  { name: '@anthropic-ai/claude-code', bin: 'claude' },
  { name: '@openai/codex', bin: 'codex' },
  { name: '@google/gemini-cli', bin: 'gemini' },
  { name: 'opencode-ai', bin: 'opencode' },
] as const

/** The version of a package installed under test/agents/node_modules, or undefined. */
export function installedVersion(name: string): string | undefined {
  const file = join(SUITE_DIR, 'node_modules', name, 'package.json')
  if (!existsSync(file)) return undefined
  return (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version
}

/** The absolute path of an agent binary. */
export const agentBin = (bin: string): string => join(SUITE_DIR, 'node_modules', '.bin', bin)
