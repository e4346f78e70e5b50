import { invalidInput } from '../../core/errors.js'
import {
  bucketPeriod,
  unresolvedPeriod,
  nextDay,
  type BucketUnit,
  type Cond,
  type FactQuery,
  type Literal,
  type Measure,
  type Period,
  type Tie,
} from '../../core/facts/fact-query.js'
import { comparisonAnswer, extremeAnswer, MAX_ANSWER_IDS } from '../../core/facts/fact-answer.js'
import { mentionsStatus } from '../../core/facts/fact-resolve.js'
import type { CollectionSpec, FactValue } from '../../core/facts/fact-types.js'
import type { FactGroup, FactQueryLimits, FactQueryResult, FactScope } from '../fact-store.js'
import type { SqliteDb } from './sqlite-db.js'
import { activityBase, registerActivityFunctions } from './sqlite-activity.js'
import { isActivityCollection } from '../../core/facts/activity.js'

// Compiling a resolved fact query (core/facts) to SQL over the fact tables, with every value a named parameter, and
// running it under the query limits. Field values live in fact_records.data (JSON): a field is json_extract(data, path).

/** Rows a `list` query returns when it names no limit. */
const DEFAULT_LIST_LIMIT = 100

/** The SQL text of one statement under construction, with its named parameters. */
class Sql {
  readonly params: Record<string, unknown> = {}
  private n = 0
  private readonly paths = new Map<string, string>()

  constructor(readonly spec: CollectionSpec) {}

  /** A named parameter holding `value`. */
  p(value: unknown): string {
    const name = `p${this.n++}`
    this.params[name] = typeof value === 'boolean' ? (value ? 1 : 0) : value
    return `@${name}`
  }

  /** The SQL expression of a field (the record's id and status are columns). */
  field(name: string): string {
    if (name === 'id') return 'r.id'
    if (name === 'status') return 'r.status'
    let param = this.paths.get(name)
    if (param === undefined) {
      param = this.p(`$.${name}`)
      this.paths.set(name, param)
    }
    return `json_extract(r.data, ${param})`
  }

  isList(name: string): boolean {
    return this.spec.fields.find((f) => f.name === name)?.type === 'list'
  }

  /** The data path parameter of a field (for json_each). */
  path(name: string): string {
    this.field(name)
    return this.paths.get(name)!
  }
}

function literal(v: Literal): unknown {
  return v.kind === 'boolean' ? (v.value ? 1 : 0) : v.value
}

function bucket(expr: string, unit: BucketUnit): string {
  switch (unit) {
    case 'day':
      return `substr(${expr}, 1, 10)`
    case 'month':
      return `substr(${expr}, 1, 7)`
    case 'year':
      return `substr(${expr}, 1, 4)`
    case 'quarter':
      return `(substr(${expr}, 1, 4) || '-Q' || ((CAST(substr(${expr}, 6, 2) AS INTEGER) + 2) / 3))`
    case 'half':
      return `(substr(${expr}, 1, 4) || '-H' || ((CAST(substr(${expr}, 6, 2) AS INTEGER) + 5) / 6))`
    case 'week':
      return `strftime('%G-W%V', substr(${expr}, 1, 10))`
  }
}

function cond(sql: Sql, c: Cond): string {
  if ('and' in c) return `(${c.and.map((x) => cond(sql, x)).join(' AND ')})`
  if ('or' in c) return `(${c.or.map((x) => cond(sql, x)).join(' OR ')})`
  if ('not' in c) return `NOT coalesce(${cond(sql, c.not)}, 0)`
  const x = sql.field(c.field)
  switch (c.op) {
    case 'null':
      return `${x} IS NULL`
    case 'not-null':
      return `${x} IS NOT NULL`
    case 'contains':
      return `instr(lower(${x}), lower(${sql.p(c.value)})) > 0`
    case 'has':
      return `EXISTS (SELECT 1 FROM json_each(r.data, ${sql.path(c.field)}) WHERE value = ${sql.p(literal(c.value))})`
    case 'within': {
      if (!('from' in c.period)) throw unresolvedPeriod(c.field, c.period)
      return `(${x} >= ${sql.p(c.period.from)} AND ${x} < ${sql.p(nextDay(c.period.to))})`
    }
    case 'in':
      return `${x} IN (${c.values.map((v) => sql.p(literal(v))).join(', ')})`
    case 'between': {
      // An inclusive date range ends at the end of its last day for a datetime field.
      const high =
        c.high.kind === 'date' && fieldType(sql, c.field) === 'datetime'
          ? `${x} < ${sql.p(nextDay(c.high.value))}`
          : `${x} <= ${sql.p(literal(c.high))}`
      return `(${x} >= ${sql.p(literal(c.low))} AND ${high})`
    }
    default: {
      const op = c.op
      return `${x} ${op} ${sql.p(literal(c.value))}`
    }
  }
}

function fieldType(sql: Sql, name: string): string | undefined {
  return sql.spec.fields.find((f) => f.name === name)?.type
}

function measureSql(sql: Sql, m: Measure): string {
  if (m.fn === 'count') return 'count(*)'
  const x = sql.field(m.field)
  return m.fn === 'distinct' ? `count(DISTINCT ${x})` : `${m.fn}(${x})`
}

const deadlines = new WeakMap<object, { until: number; now: () => number }>()

/** Registers `fact_deadline()` on the connection once: true until the running query's time limit passes, then it stops the query. */
function deadlineFor(s: SqliteDb): { until: number; now: () => number } {
  let d = deadlines.get(s.db)
  if (d === undefined) {
    const state = { until: Number.POSITIVE_INFINITY, now: s.now }
    s.db.function('fact_deadline', { deterministic: false }, () => {
      if (state.now() > state.until)
        throw invalidInput(
          'query',
          'query: stopped at its time limit before it finished',
          'narrow it with where, or raise the limit (timeoutMs)',
        )
      return 1
    })
    registerActivityFunctions(s)
    deadlines.set(s.db, state)
    d = state
  }
  return d
}

/** Runs a resolved query within its scope and limits; see `FactStore.query`. */
export function runFactQuery(s: SqliteDb, scope: FactScope, spec: CollectionSpec, q: FactQuery, limits: FactQueryLimits): FactQueryResult {
  return s.guard('facts query', () => {
    const activity = isActivityCollection(spec.name)
    if (activity && q.asOf !== undefined)
      throw invalidInput('query', `query: "as of" is for recorded facts; ${spec.name} is the activity as it is in the log now`)
    const size = (
      activity
        ? s
            .stmt('SELECT count(*) FROM observations WHERE project_id = (SELECT id FROM projects WHERE root = ?) AND user_id IS ?')
            .pluck()
            .get(scope.projectRoot, scope.user)
        : s
            .stmt('SELECT count(*) FROM fact_records WHERE project_root = ? AND collection = ? AND user_id IS ?')
            .pluck()
            .get(scope.projectRoot, spec.name, scope.user)
    ) as number
    if (size > limits.maxRows) {
      throw invalidInput(
        'query',
        `query: ${spec.name} holds ${size} records, above the query limit of ${limits.maxRows}`,
        'raise maxRows, or split the collection',
      )
    }
    const deadline = deadlineFor(s)
    deadline.until = s.now() + limits.timeoutMs
    try {
      return run(s, scope, spec, q)
    } finally {
      deadline.until = Number.POSITIVE_INFINITY
    }
  })
}

function run(s: SqliteDb, scope: FactScope, spec: CollectionSpec, q: FactQuery): FactQueryResult {
  const ran: { sql: string; params: unknown[] }[] = []
  const exec = <T>(sql: Sql, text: string, pluck = false): T[] => {
    ran.push({ sql: text, params: [sql.params] })
    const st = s.stmt(text)
    return (pluck ? st.pluck().all(sql.params) : st.all(sql.params)) as T[]
  }
  /** A new statement: the scope's records as `r` (current, or as recorded by `asOf`), the filter `w`, and its status and query parts. */
  const start = (withFilter = true): { sql: Sql; head: string; w: string; scan: string; filter: string | undefined } => {
    const sql = new Sql(spec)
    const activity = activityBase(spec.name, scope, (v) => sql.p(v))
    const base =
      activity !== undefined
        ? activity
        : q.asOf === undefined
          ? `SELECT rowid AS rn, id, data, status, recorded_at, provenance FROM fact_records WHERE project_root = ${sql.p(scope.projectRoot)} AND collection = ${sql.p(spec.name)} AND user_id IS ${sql.p(scope.user)} AND retracted_at IS NULL`
          : (() => {
              const at = Date.parse(q.asOf.length === 10 ? `${q.asOf}T23:59:59.999Z` : q.asOf)
              const t = sql.p(at)
              return `SELECT event_seq AS rn, record_id AS id, data, status, recorded_at, provenance FROM fact_versions WHERE project_root = ${sql.p(scope.projectRoot)} AND collection = ${sql.p(spec.name)} AND user_id IS ${sql.p(scope.user)} AND action = 'assert' AND recorded_at <= ${t} AND (superseded_at IS NULL OR superseded_at > ${t})`
            })()
    // The time limit is checked on every 64th row: a call into JavaScript per row would cost more than the query.
    const parts = ['(r.rn % 64 <> 0 OR fact_deadline())']
    if (q.status !== 'any' && !mentionsStatus(q.where)) parts.push(`r.status = ${sql.p(q.status ?? 'done')}`)
    const scan = parts.join(' AND ')
    const filter = withFilter && q.where ? cond(sql, q.where) : undefined
    return { sql, head: `WITH r AS (${base})`, w: filter === undefined ? scan : `${scan} AND ${filter}`, scan, filter }
  }
  const timeExpr = (sql: Sql): string => (spec.timeField !== undefined ? sql.field(spec.timeField) : 'NULL')

  let collection: FactQueryResult['collection'] = { records: 0 }
  /**
   * The records an answer rests on (those of the filter and `extra`): ids (time order), how many, their time range and
   * sources; and, from the same scan, the collection's records of the counted statuses and their time range.
   */
  const contributing = (
    extra: (sql: Sql) => string | undefined,
    join: (sql: Sql) => string = () => '',
  ): Pick<FactQueryResult, 'records' | 'matched' | 'sources'> & { from?: string; to?: string } => {
    const { sql, head, scan, filter } = start()
    const more = extra(sql)
    const joined = join(sql)
    const t = timeExpr(sql)
    const hit = [filter, more].filter((x): x is string => x !== undefined)
    const rows = exec<{ id: string; t: string | null; src: string | null; hit: number }>(
      sql,
      joined === ''
        ? `${head} SELECT r.id AS id, ${t} AS t, json_extract(r.provenance, '$.source') AS src, ${hit.length === 0 ? '1' : `coalesce(${hit.join(' AND ')}, 0)`} AS hit FROM r WHERE ${scan} ORDER BY t, r.id`
        : `${head} SELECT r.id AS id, ${t} AS t, json_extract(r.provenance, '$.source') AS src, max(${hit.length === 0 ? '1' : `coalesce(${hit.join(' AND ')}, 0)`}) AS hit FROM r LEFT JOIN ${joined} WHERE ${scan} GROUP BY r.id ORDER BY t, r.id`,
    )
    const range = (xs: { t: string | null }[]): { from?: string; to?: string } => {
      const times = xs.map((r) => r.t).filter((x): x is string => typeof x === 'string')
      // biome-ignore lint/complexity/useMathMinMax: the times are ISO strings, which Math.min would turn into NaN
      return times.length > 0 ? { from: times.reduce((a, b) => (a < b ? a : b)), to: times.reduce((a, b) => (a > b ? a : b)) } : {}
    }
    collection = { records: rows.length, ...range(rows) }
    const hits = rows.filter((r) => r.hit === 1)
    return {
      records: hits.slice(0, MAX_ANSWER_IDS).map((r) => r.id),
      matched: hits.length,
      sources: [...new Set(hits.map((r) => r.src ?? 'unknown'))].sort(),
      ...range(hits),
    }
  }

  const done = (r: Omit<FactQueryResult, 'collection' | 'sql'>): FactQueryResult => ({ ...r, collection, sql: ran })
  const v = q.verb
  switch (v.verb) {
    case 'aggregate': {
      const { sql, head, w } = start()
      const m = measureSql(sql, v.measure)
      const value = exec<number | string | null>(sql, `${head} SELECT ${m} FROM r WHERE ${w}`, true)[0] ?? null
      const field = v.measure.fn === 'count' ? undefined : v.measure.field
      const c = contributing((x) => (field !== undefined ? `${x.field(field)} IS NOT NULL` : undefined))
      const kind = v.measure.fn === 'count' || v.measure.fn === 'distinct' ? 'count' : typeof value === 'string' ? 'value' : 'number'
      return done({ kind, value, ...c })
    }
    case 'list': {
      const { sql, head, w } = start()
      const order = v.order
        ? `${sql.field(v.order.field)} ${v.order.dir === 'desc' ? 'DESC' : 'ASC'}, `
        : spec.timeField
          ? `${sql.field(spec.timeField)}, `
          : ''
      const rows = exec<{ id: string; data: string; status: string }>(
        sql,
        `${head} SELECT r.id AS id, json(r.data) AS data, r.status AS status FROM r WHERE ${w} ORDER BY ${order}r.recorded_at, r.rn, r.id LIMIT ${sql.p(v.limit ?? DEFAULT_LIST_LIMIT)} OFFSET ${sql.p(v.offset ?? 0)}`,
      )
      const value = rows.map((row) => {
        const data = JSON.parse(row.data) as Record<string, FactValue>
        const picked =
          v.fields.length > 0
            ? Object.fromEntries(v.fields.map((f) => [f, f === 'id' ? row.id : f === 'status' ? row.status : (data[f] ?? null)]))
            : data
        return { id: row.id, ...picked }
      })
      const c = contributing(() => undefined)
      return done({ kind: 'rows', value, ...c, records: rows.map((r) => r.id) })
    }
    case 'argmax':
    case 'argmin': {
      const { sql, head, w } = start()
      const x = sql.field(v.field)
      const ret = v.return !== undefined ? sql.field(v.return) : 'r.id'
      const best = v.verb === 'argmax' ? 'max' : 'min'
      const tieOrder = tieSql(sql, v.ties, ret)
      const rows = exec<{ id: string; best: unknown; ret: FactValue }>(
        sql,
        `${head} SELECT r.id AS id, ${x} AS best, ${ret} AS ret FROM r WHERE ${w} AND ${x} = (SELECT ${best}(${x}) FROM r WHERE ${w}) ORDER BY ${tieOrder.order}${tieOrder.limit ? ` LIMIT 1` : ''}`,
      )
      const c = contributing((y) => `${y.field(v.field)} IS NOT NULL`)
      return done(extremeAnswer(rows, c))
    }
    case 'group': {
      const { sql, head, w } = start()
      const listKey = v.key.bucket === undefined && sql.isList(v.key.field)
      const join = listKey ? `, json_each(r.data, ${sql.path(v.key.field)}) AS j` : ''
      const key = listKey ? 'j.value' : v.key.bucket !== undefined ? bucket(sql.field(v.key.field), v.key.bucket) : sql.field(v.key.field)
      const m = measureSql(sql, v.measure)
      const tie =
        'top' in v.pick && (v.pick.ties.rule === 'earliest' || v.pick.ties.rule === 'latest') ? sql.field(v.pick.ties.field) : 'NULL'
      const g = `${head}, g AS (SELECT ${key} AS key, count(*) AS n, ${m} AS m, min(${tie}) AS tmin, max(${tie}) AS tmax FROM r${join} WHERE ${w} AND ${key} IS NOT NULL GROUP BY 1)`
      let text: string
      if ('top' in v.pick) {
        const t = v.pick.ties
        if (t.rule === 'all')
          text = `${g} SELECT key, n, m FROM g WHERE m >= (SELECT m FROM g ORDER BY m DESC LIMIT 1 OFFSET ${sql.p(v.pick.top - 1)}) ORDER BY m DESC, key`
        else
          text = `${g} SELECT key, n, m FROM g ORDER BY m DESC, ${t.rule === 'first' ? 'key' : t.rule === 'earliest' ? 'tmin, key' : 'tmax DESC, key'} LIMIT ${sql.p(v.pick.top)}`
      } else if ('share' in v.pick) {
        const total = v.measure.fn === 'count' ? 'count(*)' : measureSql(sql, v.measure)
        text = `${g}, t AS (SELECT ${total} AS total FROM r WHERE ${w}) SELECT key, n, m, m * 100.0 / t.total AS share FROM g, t WHERE t.total > 0 AND m * 100.0 / t.total ${v.pick.share.op} ${sql.p(v.pick.share.percent)} ORDER BY m DESC, key`
      } else text = `${g} SELECT key, n, m FROM g ORDER BY m DESC, key`
      const rows = exec<{ key: string | number; n: number; m: number | string | null; share?: number }>(sql, text)
      const groups: FactGroup[] = rows.map((r) => ({
        key: r.key,
        value: r.m,
        count: r.n,
        ...(r.share !== undefined ? { share: r.share } : {}),
      }))
      const keys = JSON.stringify(groups.map((x) => x.key))
      // A share rests on every filtered record (they make its total); a top or full grouping on its groups' records.
      const c = contributing(
        (y) => {
          if ('share' in v.pick) return undefined
          const k = listKey ? 'j.value' : v.key.bucket !== undefined ? bucket(y.field(v.key.field), v.key.bucket) : y.field(v.key.field)
          return `${k} IN (SELECT value FROM json_each(${y.p(keys)}))`
        },
        (y) => (listKey && !('share' in v.pick) ? `json_each(r.data, ${y.path(v.key.field)}) AS j` : ''),
      )
      return done({ kind: 'groups', value: groups.map((x) => x.key) as (string | number)[], groups, ...c })
    }
    case 'compare': {
      const a = resolvePeriod(v.a, v.over)
      const b = resolvePeriod(v.b, v.over)
      const { sql, head, w } = start()
      const o = sql.field(v.over)
      const m = measureSql(sql, v.measure)
      const inA = `${o} >= ${sql.p(a.from)} AND ${o} < ${sql.p(nextDay(a.to))}`
      const inB = `${o} >= ${sql.p(b.from)} AND ${o} < ${sql.p(nextDay(b.to))}`
      const row = exec<{ a: number | null; an: number; b: number | null; bn: number }>(
        sql,
        `${head} SELECT ${m} FILTER (WHERE ${inA}) AS a, count(*) FILTER (WHERE ${inA}) AS an, ${m} FILTER (WHERE ${inB}) AS b, count(*) FILTER (WHERE ${inB}) AS bn FROM r WHERE ${w}`,
      )[0]!
      const c = contributing((y) => {
        const oo = y.field(v.over)
        return `((${oo} >= ${y.p(a.from)} AND ${oo} < ${y.p(nextDay(a.to))}) OR (${oo} >= ${y.p(b.from)} AND ${oo} < ${y.p(nextDay(b.to))}))`
      })
      return done({ ...comparisonAnswer(v.measure.fn, a, b, row), ...c })
    }
  }

  /** A relative period (`first year`) as the first or last bucket of the field among the filtered records. */
  function resolvePeriod(p: Period, over: string): { from: string; to: string; label: string } {
    if ('from' in p) return p
    if (!('relative' in p)) throw unresolvedPeriod(over, p)
    const { sql, head, w } = start()
    const bx = bucket(sql.field(over), p.unit)
    const label =
      exec<string | null>(
        sql,
        `${head} SELECT ${p.relative === 'first' ? 'min' : 'max'}(${bx}) FROM r WHERE ${w} AND ${sql.field(over)} IS NOT NULL`,
        true,
      )[0] ?? null
    if (label === null) return { from: '9999-12-31', to: '9999-12-31', label: `${p.relative} ${p.unit} (no records)` }
    return { ...bucketPeriod(String(label), p.unit), label: `${p.relative} ${p.unit} (${label})` }
  }
}

function tieSql(sql: Sql, t: Tie, ret: string): { order: string; limit: boolean } {
  if (t.rule === 'all') return { order: 'r.recorded_at, r.id', limit: false }
  if (t.rule === 'first') return { order: `${ret}, r.id`, limit: true }
  return { order: `${sql.field(t.field)} ${t.rule === 'earliest' ? 'ASC' : 'DESC'}, r.id`, limit: true }
}
