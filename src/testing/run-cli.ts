import { runCli, type CliIo } from '../adapters/cli/program.js'

/** What one in-process `mnemo` run gave: its exit code and everything it wrote to stdout and stderr. */
export interface CliRun {
  code: number
  stdout: string
  stderr: string
}

/**
 * Runs `mnemo <argv>` in-process through `runCli` (the real program, as the binary runs it) and captures its output.
 *
 * @param argv - The arguments after `mnemo`, e.g. `['remember', 'we deploy on Fridays', '--json']`.
 * @param io - The environment and working directory of the run; `stdout`/`stderr` are captured, not passed.
 * @returns The exit code (0, 1 or 2, see `exit-codes.ts`) with the text written to each stream.
 */
export async function runCliCaptured(argv: readonly string[], io: Omit<CliIo, 'stdout' | 'stderr'>): Promise<CliRun> {
  let stdout = ''
  let stderr = ''
  const code = await runCli(argv, { ...io, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) })
  return { code, stdout, stderr }
}
