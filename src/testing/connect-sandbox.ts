import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, beforeEach } from 'vitest'
import type { AgentConnectOptions } from '../adapters/cli/connect/connect-plan.js'
import type { ParsedJson } from './json.js'

/** The node and CLI paths every connect test plans hook commands with. */
export const NODE = '/usr/local/bin/node'
export const CLI = '/opt/mnemo/dist/adapters/cli/main.js'

/** A fresh temporary folder per test, with `home/` made and user-scope connect options pointing at it. */
export interface ConnectSandbox {
  root: string
  home: string
  base: AgentConnectOptions
}

/**
 * Registers vitest hooks that give each test a fresh sandbox (removed after
 * it) and hands it to `use`, which keeps it in the test file's own variables.
 */
export function useConnectSandbox(prefix: string, use: (sandbox: ConnectSandbox) => void): void {
  let root = ''
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), prefix))
    const home = join(root, 'home')
    mkdirSync(home)
    use({ root, home, base: { scope: 'user', homeDir: home, projectDir: join(root, 'proj'), env: {}, nodePath: NODE, cliPath: CLI } })
  })
  afterEach(() => rmSync(root, { recursive: true, force: true }))
}

export const read = (p: string): string => readFileSync(p, 'utf8')
export const readJson = (p: string): ParsedJson => JSON.parse(read(p))

/** Writes `value` to `p`, making its folder: text as it is, anything else as pretty JSON with a final newline. */
export const write = (p: string, value: unknown): void => {
  mkdirSync(dirname(p), { recursive: true })
  writeFileSync(p, typeof value === 'string' ? value : `${JSON.stringify(value, null, 2)}\n`)
}
