/**
 * The text of a procedure memory: what recall indexes, what a person reads,
 * and (parsed back) what the next consolidation compares against. No
 * dependencies, so the context block can read it on the hook path.
 *
 *     Procedure: add middleware
 *     When: tasks like "Add rate limiting middleware" or "Add CORS middleware"
 *     Steps:
 *     1. Read src/*.ts
 *     2. Edit src/middleware/*.ts
 *     3. Run npm test — the suite must pass before committing
 *     Files: src/middleware/*.ts
 *     Check: npm test, passed at the end of each of 2 successful sessions
 */

/** One step of a procedure: an action label (`Edit src/middleware/*.ts`, `Run npm test`) and, from a model, what to do in it. */
export interface ProcedureStep {
  label: string
  detail?: string
}

/** The parts of a procedure's text. */
export interface ProcedureParts {
  /** Short name of the kind of work. */
  name: string
  /** When to use it: the kind of task. */
  trigger: string
  steps: ProcedureStep[]
  /** File patterns this kind of work changes (every source session edited each). */
  files: string[]
  /** The command whose success verified each source session. */
  check: string
  /** How many successful sessions the steps were checked against. */
  sessions: number
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim()

/** The readable text of a procedure (one line each for name, trigger, step, files, check). */
export function procedureText(p: ProcedureParts): string {
  return [
    `Procedure: ${oneLine(p.name)}`,
    `When: ${oneLine(p.trigger)}`,
    'Steps:',
    ...p.steps.map((s, i) => `${i + 1}. ${oneLine(s.label)}${s.detail && oneLine(s.detail) ? ` — ${oneLine(s.detail)}` : ''}`),
    `Files: ${p.files.join(', ')}`,
    `Check: ${oneLine(p.check)}, passed at the end of each of ${p.sessions} successful sessions`,
  ].join('\n')
}

/** The parts of a text written by {@link procedureText}; undefined for any other text. */
export function parseProcedureText(text: string): ProcedureParts | undefined {
  const lines = text.split('\n')
  const name = /^Procedure: (.+)$/.exec(lines[0] ?? '')?.[1]
  const trigger = /^When: (.+)$/.exec(lines[1] ?? '')?.[1]
  if (name === undefined || trigger === undefined || lines[2] !== 'Steps:') return undefined
  const steps: ProcedureStep[] = []
  let i = 3
  for (; i < lines.length; i++) {
    const m = /^\d+\. (.+)$/.exec(lines[i]!)
    if (!m) break
    const [label, ...detail] = m[1]!.split(' — ')
    steps.push(detail.length > 0 ? { label: label!, detail: detail.join(' — ') } : { label: label! })
  }
  const files = /^Files: (.*)$/.exec(lines[i] ?? '')?.[1]
  const check = /^Check: (.+), passed at the end of each of (\d+) successful sessions$/.exec(lines[i + 1] ?? '')
  if (files === undefined || !check || steps.length === 0) return undefined
  return { name, trigger, steps, files: files.length > 0 ? files.split(', ') : [], check: check[1]!, sessions: Number(check[2]) }
}

/** `add middleware — when: tasks like …`: a procedure's one-line form for the context block (its first two lines). */
export function procedureHeadline(text: string, withCheck = false): string {
  const [first = '', second = ''] = text.split('\n')
  const name = first.replace(/^Procedure:\s*/, '')
  const when = second.replace(/^When:\s*/, '')
  // Two procedures may share a name (the same work, checked by npm test in one and pnpm test in the other).
  const check = withCheck ? /^Check: (.+), passed at the end of each of \d+ successful sessions$/m.exec(text)?.[1] : undefined
  const named = check ? `${name} (checked by ${check})` : name
  return when ? `${named} — when: ${when}` : named
}
