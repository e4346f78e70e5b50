/**
 * Which documents of a scope recall may return — the kinds asked for, current or as of a time, archived or not —
 * written once: `visibilityTerms` says which conditions a request makes, and each kind of condition has its SQL
 * (`visibilitySql`, which each dialect's `visibleWhere` calls with its column names and parameters) and its
 * TypeScript test (`isVisible`) side by side below. Every channel applies it inside its own query, before its cut:
 * keyword, time, graph mentions, neighbour spreading and the neural vectors in SQL; the builtin vectors, whose
 * matrices are cached with every document of their scope, with `isVisible` (engine/builtin-vectors.ts `search`).
 * `contract/visibility.contract.test.ts` runs both over generated documents and requests in every dialect and fails
 * when they disagree.
 *
 * Whose documents they are (projects, user, agent: `Scope`) is the other half of what a reader may see, applied by
 * each dialect's `scopeWhere`.
 */

/** What a recall asks of the documents of its scope, beside the scope itself. */
export interface Visibility {
  /** As of this time (epoch ms): observations made by then, memories current then. Default: now (current memories only). */
  asOf?: number
  /** Include archived memories. Default false. */
  includeArchived?: boolean
  /** Only documents of these kinds (observation kinds such as `prompt`; memory kinds such as `decision`). Absent or empty: every kind. */
  kinds?: readonly string[]
}

/**
 * What the rule reads of a document (a `SearchDoc` has them): observation or memory, its kind, its time (epoch ms:
 * an observation's time, a memory's creation, which is where its validity starts), and for a memory when it stopped
 * being current (superseded) and when it was archived.
 */
interface VisibilityFacts {
  type: 'observation' | 'memory'
  kind: string
  ts: number
  validTo?: number
  archivedAt?: number
}

/** One condition of the rule on one fact of a document; `of` names the documents it applies to (the others pass it). */
type Term =
  | { of: 'any'; fact: 'kind'; in: readonly string[] }
  | { of: 'any'; fact: 'ts'; atMost: number }
  | { of: 'memory'; fact: 'validTo'; absentOrAfter: number | undefined }
  | { of: 'memory'; fact: 'archivedAt'; absent: true }

/**
 * The conditions `v` makes, all of which a visible document meets: its kind among `kinds` (when given); with `asOf`,
 * made by then and, for a memory, not yet superseded then (`validTo` absent or later); without it, a memory not
 * superseded; and, unless `includeArchived`, a memory not archived.
 */
function visibilityTerms(v: Visibility): Term[] {
  const terms: Term[] = []
  if (v.kinds && v.kinds.length > 0) terms.push({ of: 'any', fact: 'kind', in: v.kinds })
  if (v.asOf !== undefined) terms.push({ of: 'any', fact: 'ts', atMost: v.asOf })
  terms.push({ of: 'memory', fact: 'validTo', absentOrAfter: v.asOf })
  if (!v.includeArchived) terms.push({ of: 'memory', fact: 'archivedAt', absent: true })
  return terms
}

/** True when the document meets every condition of `v` (see `visibilityTerms`). */
export function isVisible(v: Visibility, doc: VisibilityFacts): boolean {
  return visibilityTerms(v).every((t) => termHolds(t, doc))
}

/** False when `v` lets recall return every observation of the scope (only memories can be hidden): a caller then checks memories only. */
export function hidesObservations(v: Visibility): boolean {
  return visibilityTerms(v).some((t) => t.of !== 'memory')
}

function termHolds(t: Term, doc: VisibilityFacts): boolean {
  if (t.of !== 'any' && doc.type !== t.of) return true
  switch (t.fact) {
    case 'kind':
      return t.in.includes(doc.kind)
    case 'ts':
      return doc.ts <= t.atMost
    case 'validTo':
      return doc.validTo === undefined || (t.absentOrAfter !== undefined && doc.validTo > t.absentOrAfter)
    case 'archivedAt':
      return doc.archivedAt === undefined
  }
}

/**
 * Where a query finds the facts of its rows: a SQL expression per fact (NULL for absent), and which rows are
 * documents of which type — a table of one type (`observations`, `memories`), or rows that mix both (an outer join of
 * the two, PostgreSQL's `search_docs`) with an expression true for a row that is not a memory.
 */
export interface VisibilityColumns {
  kind: string
  ts: string
  /** NULL, or when the memory stopped being current; any expression for a table of observations. */
  validTo: string
  /** NULL, or when the memory was archived; any expression for a table of observations. */
  archivedAt: string
  rows: 'observation' | 'memory' | { notMemory: string }
}

/** How a dialect writes a parameter: `param` binds a value and returns its placeholder; `inList` is `col` among `values`. */
interface SqlBinder {
  param(value: number): string
  inList(col: string, values: readonly string[]): string
}

/** The facts `visibleWhere` reads of a row of `observations` (`alias` its name or alias); the tables and their columns are named alike in every dialect. */
export const observationVisibility = (alias: string): VisibilityColumns => ({
  kind: `${alias}.kind`,
  ts: `${alias}.ts`,
  validTo: 'NULL',
  archivedAt: 'NULL',
  rows: 'observation',
})

/** The facts `visibleWhere` reads of a row of `memories` (`alias` its name or alias); the tables and their columns are named alike in every dialect. */
export const memoryVisibility = (alias: string): VisibilityColumns => ({
  kind: `${alias}.kind`,
  ts: `${alias}.created_at`,
  validTo: `${alias}.valid_to`,
  archivedAt: `${alias}.archived_at`,
  rows: 'memory',
})

/**
 * The SQL conditions of `v` (see `visibilityTerms`), each starting with ` AND ` ('' when there are none), over the
 * columns `cols` names, its parameters bound through `bind` in the order they appear.
 */
export function visibilitySql(v: Visibility, cols: VisibilityColumns, bind: SqlBinder): string {
  let sql = ''
  for (const t of visibilityTerms(v)) {
    if (t.of !== 'any' && typeof cols.rows === 'string' && cols.rows !== t.of) continue
    const cond = termSql(t, cols, bind)
    // A memory's condition holds for an observation row of a mixed source: `(not a memory OR cond)`.
    sql += t.of !== 'any' && typeof cols.rows !== 'string' ? ` AND (${cols.rows.notMemory} OR ${cond})` : ` AND ${cond}`
  }
  return sql
}

function termSql(t: Term, cols: VisibilityColumns, bind: SqlBinder): string {
  switch (t.fact) {
    case 'kind':
      return bind.inList(cols.kind, t.in)
    case 'ts':
      return `${cols.ts} <= ${bind.param(t.atMost)}`
    case 'validTo':
      return t.absentOrAfter === undefined
        ? `${cols.validTo} IS NULL`
        : `(${cols.validTo} IS NULL OR ${cols.validTo} > ${bind.param(t.absentOrAfter)})`
    case 'archivedAt':
      return `${cols.archivedAt} IS NULL`
  }
}
