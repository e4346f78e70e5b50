import type { Pool, PoolClient } from 'pg'
import { invalidInput, MnemoError } from '../../core/errors.js'
import { isActivityCollection } from '../../core/facts/activity.js'
import { bucketPeriod, type FactQuery, nextDay, type Period, unresolvedPeriod } from '../../core/facts/fact-query.js'
import { comparisonAnswer, extremeAnswer, MAX_ANSWER_IDS } from '../../core/facts/fact-answer.js'
import { mentionsStatus } from '../../core/facts/fact-resolve.js'
import type { CollectionSpec, FactValue, FactValues } from '../../core/facts/fact-types.js'
import { mergeSpecs } from '../../core/facts/fact-values.js'
import type { FactGroup, FactQueryLimits, FactQueryResult, FactScope } from '../fact-store.js'
import { type ActivityRow, activityFrom, activityRows, activitySize } from './pg-fact-activity.js'
import { QUERY_CANCELED, run, wrapPg } from './pg-fact-schema.js'
import { asc, bucket, cond, desc, inSpecOrder, jsonValue, measure, PgSql, tieOrder, type ValueKind } from './pg-fact-sql.js'

// Running a resolved fact query (core/facts) on PostgreSQL: the statements of sqlite-fact-query.ts, clause for clause,
// over the jsonb values of fact_records (or fact_versions "as of"), in one read-only transaction (one snapshot) under
// the query's row and time limits.

/** Rows a `list` query returns when it names no limit. */
const DEFAULT_LIST_LIMIT = 100

function timeLimit(cause?: unknown): MnemoError {
  return new MnemoError('INVALID_INPUT', 'query: stopped at its time limit before it finished', {
    details: { path: 'query' },
    hint: 'narrow it with where, or raise the limit (timeoutMs)',
    ...(cause !== undefined ? { cause } : {}),
  })
}

/**
 * Runs a resolved query within its scope and limits (see `FactStore.query`): one read-only, repeatable-read
 * transaction, its statements under `SET LOCAL statement_timeout` kept within what is left of `limits.timeoutMs`
 * (to within a tenth of it, at least 20 ms).
 * @throws {MnemoError} `INVALID_INPUT` (path `query`) — the collection holds more than `limits.maxRows` records, or
 *   the query ran past `limits.timeoutMs` (wall time). `STORE_UNAVAILABLE` — a server error.
 */
export async function runPgFactQuery(
  db: Pool,
  scope: FactScope,
  spec: CollectionSpec,
  q: FactQuery,
  limits: FactQueryLimits,
): Promise<FactQueryResult> {
  return (await runPgQuery(db, scope, { spec, query: q }, limits))!.result
}

/**
 * `FactStore.queryByName` on PostgreSQL: reads the collection's spec in the query's own transaction (the same round
 * trip that begins it), resolves the query against it with `resolve`, and runs it as `runPgFactQuery` does.
 * @returns The spec, the resolved query and its result; undefined when the scope has no such recorded collection.
 * @throws {MnemoError} what `resolve` throws, and what `runPgFactQuery` throws.
 */
export async function runPgNamedFactQuery(
  db: Pool,
  scope: FactScope,
  name: string,
  resolve: (spec: CollectionSpec) => FactQuery,
  limits: FactQueryLimits,
): Promise<{ spec: CollectionSpec; query: FactQuery; result: FactQueryResult } | undefined> {
  return runPgQuery(db, scope, { name, resolve }, limits)
}

async function runPgQuery(
  db: Pool,
  scope: FactScope,
  target: { spec: CollectionSpec; query: FactQuery } | { name: string; resolve: (spec: CollectionSpec) => FactQuery },
  limits: FactQueryLimits,
): Promise<{ spec: CollectionSpec; query: FactQuery; result: FactQueryResult } | undefined> {
  const name = 'spec' in target ? target.spec.name : target.name
  const activity = isActivityCollection(name)
  if (activity && !('spec' in target)) throw invalidInput('query', `query: ${name} is an activity collection; give its spec`)
  if ('spec' in target && activity && target.query.asOf !== undefined)
    throw invalidInput('query', `query: "as of" is for recorded facts; ${name} is the activity as it is in the log now`)
  let client: PoolClient
  try {
    client = await db.connect()
  } catch (cause) {
    throw wrapPg(cause, 'facts query')
  }
  const deadline = performance.now() + limits.timeoutMs
  let committing = false
  try {
    let timeout = Math.max(1, Math.ceil(limits.timeoutMs))
    const begin = `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL statement_timeout = ${timeout}`
    let size: number
    let spec = 'spec' in target ? target.spec : undefined
    if (activity) {
      await run(client, 'facts query', begin)
      size = await activitySize(client, scope)
    } else {
      // One round trip: the transaction, its first time limit, the collection's declarations (when not given) and its
      // size, as one simple query (the scope's values as escaped literals: a simple query takes no parameters).
      const lit = (v: string | null): string => (v === null ? 'NULL' : client.escapeLiteral(v))
      const inScope = `project_root = ${lit(scope.projectRoot)} AND collection = ${lit(name)} AND user_id IS NOT DISTINCT FROM ${lit(scope.user)}`
      const specs = spec === undefined ? `; SELECT spec FROM fact_schema WHERE ${inScope} ORDER BY event_seq` : ''
      const results = (await client.query(`${begin}${specs}; SELECT count(*)::int AS n FROM fact_records WHERE ${inScope}`)) as unknown as {
        rows: { n?: number; spec?: CollectionSpec }[]
      }[]
      size = results.at(-1)?.rows[0]?.n ?? 0
      if (spec === undefined) {
        for (const row of results.at(-2)?.rows ?? []) spec = spec ? mergeSpecs(spec, row.spec!) : row.spec!
        if (spec === undefined) {
          committing = true
          client.query('COMMIT').then(
            () => client.release(),
            (e: unknown) => client.release(e instanceof Error ? e : new Error(String(e))),
          )
          return undefined
        }
      }
    }
    const q = 'spec' in target ? target.query : target.resolve(spec!)
    if (size > limits.maxRows) {
      throw invalidInput(
        'query',
        `query: ${name} holds ${size} records, above the query limit of ${limits.maxRows}`,
        'raise maxRows, or split the collection',
      )
    }
    /**
     * Keeps the statement timeout within what is left of the query's time (refused when nothing is). It is set again
     * only when the time left falls `slack` below it, so a quick query pays no round trip for it and a slow one ends
     * at most `slack` past its limit.
     */
    const slack = Math.max(20, limits.timeoutMs / 10)
    const bound = async (): Promise<void> => {
      const left = Math.ceil(deadline - performance.now())
      if (left <= 0) throw timeLimit()
      if (left >= timeout - slack) return
      timeout = left
      await run(client, 'facts query', `SET LOCAL statement_timeout = ${timeout}`)
    }
    const exec = async <T extends Record<string, unknown>>(text: string, values: unknown[]): Promise<T[]> => {
      await bound()
      return run<T>(client, 'facts query', text, values, { prepare: true })
    }
    // Reading an activity collection's rows counts toward the time limit too.
    if (activity) await bound()
    const rows = activity ? await activityRows(client, name, scope) : undefined
    const result = await answer(exec, scope, spec!, q, rows)
    // The answer is complete: the read-only transaction's COMMIT runs off the caller's path, and the connection goes
    // back to the pool when it is done (dropped if it fails).
    committing = true
    client.query('COMMIT').then(
      () => client.release(),
      (e: unknown) => client.release(e instanceof Error ? e : new Error(String(e))),
    )
    return { spec: spec!, query: q, result }
  } catch (cause) {
    if (committing) throw wrapPg(cause, 'facts query')
    // A connection that cannot roll back is dropped rather than handed to the next caller.
    const broken = await client.query('ROLLBACK').then(
      () => undefined,
      (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
    )
    client.release(broken)
    if ((cause as { code?: unknown }).code === QUERY_CANCELED) throw timeLimit(cause)
    throw wrapPg(cause, 'facts query')
  }
}

type Exec = <T extends Record<string, unknown>>(text: string, values: unknown[]) => Promise<T[]>

/** Answers `q` by statements run through `execRaw`, over the fact tables or, for an activity collection, `activity`. */
async function answer(
  execRaw: Exec,
  scope: FactScope,
  spec: CollectionSpec,
  q: FactQuery,
  activity?: ActivityRow[],
): Promise<FactQueryResult> {
  const activityJson = activity === undefined ? undefined : JSON.stringify(activity)
  const activityData = new Map(activity?.map((r) => [r.id, r.data]))
  const ran: { sql: string; params: unknown[] }[] = []
  const exec = <T extends Record<string, unknown>>(sql: PgSql, text: string): Promise<T[]> => {
    ran.push({ sql: text, params: [...sql.params] })
    return execRaw<T>(text, sql.params)
  }
  /** A new statement: the scope's records as `r` (current, or as recorded by `asOf`), the filter `w`, and its status and query parts. */
  const start = (withFilter = true): { sql: PgSql; head: string; w: string; scan: string; filter: string | undefined } => {
    const sql = new PgSql(spec)
    const inScope = (): string =>
      `project_root = ${sql.p(scope.projectRoot, 'text')} AND collection = ${sql.p(spec.name, 'text')} AND user_id IS NOT DISTINCT FROM ${sql.p(scope.user, 'text')}`
    let base: string
    if (activityJson !== undefined) base = activityFrom(sql.p(activityJson, 'jsonb'))
    else if (q.asOf === undefined)
      base = `SELECT rn, id, data, status, recorded_at, provenance FROM fact_records WHERE ${inScope()} AND retracted_at IS NULL`
    else {
      const where = inScope()
      const t = sql.p(Date.parse(q.asOf.length === 10 ? `${q.asOf}T23:59:59.999Z` : q.asOf), 'bigint')
      base = `SELECT event_seq AS rn, record_id AS id, data, status, recorded_at, provenance FROM fact_versions WHERE ${where} AND action = 'assert' AND recorded_at <= ${t} AND (superseded_at IS NULL OR superseded_at > ${t})`
    }
    const scan = q.status !== 'any' && !mentionsStatus(q.where) ? `r.status = ${sql.p(q.status ?? 'done', 'text')}` : 'true'
    const filter = withFilter && q.where ? cond(sql, q.where) : undefined
    return { sql, head: `WITH r AS (${base})`, w: filter === undefined ? scan : `${scan} AND ${filter}`, scan, filter }
  }
  const timeExpr = (sql: PgSql): string => (spec.timeField !== undefined ? sql.field(spec.timeField) : 'NULL::text')

  let collection: FactQueryResult['collection'] = { records: 0 }
  /**
   * The records an answer rests on (those of the filter and `extra`): ids (time order), how many, their time range and
   * sources; and, from the same scan, the collection's records of the counted statuses and their time range.
   */
  const contributing = async (
    extra: (sql: PgSql) => string | undefined,
    join: (sql: PgSql) => string = () => '',
    /** A scalar subquery (SQL) over `r` and the filter `w`, computed in the same statement. */
    scalar?: (sql: PgSql, w: string) => string,
  ): Promise<Pick<FactQueryResult, 'records' | 'matched' | 'sources'> & { from?: string; to?: string; scalar?: unknown }> => {
    const { sql, head, scan, filter, w } = start()
    const more = extra(sql)
    const joined = join(sql)
    const t = timeExpr(sql)
    // A value over the filtered records (an aggregate's) computed in the same statement, once: one round trip less.
    const also = scalar !== undefined ? `, ${scalar(sql, w)} AS scalar` : ''
    const parts = [filter, more].filter((x): x is string => x !== undefined)
    const hit = parts.length === 0 ? 'true' : `coalesce(${parts.join(' AND ')}, false)`
    const each =
      joined === ''
        ? `SELECT r.id AS id, ${t} AS t, r.provenance->>'source' AS src, ${hit} AS hit FROM r WHERE ${scan}`
        : `SELECT r.id AS id, ${t} AS t, r.provenance->>'source' AS src, bool_or(${hit}) AS hit FROM r LEFT JOIN LATERAL ${joined} ON true WHERE ${scan} GROUP BY 1, 2, 3`
    // Summed up on the server, so one row comes back rather than one per record: the ids in time order (NULL first,
    // then by id, as SQLite sorts them), the counts, time ranges and sources.
    const tc = 't COLLATE "C"'
    const [row] = await exec<{
      n: number
      lo: string | null
      hi: string | null
      matched: number
      hlo: string | null
      hhi: string | null
      ids: string[] | null
      sources: string[] | null
      scalar?: unknown
    }>(
      sql,
      `${head}, c AS (${each}) SELECT count(*) AS n, min(${tc}) AS lo, max(${tc}) AS hi, count(*) FILTER (WHERE hit) AS matched,
         min(${tc}) FILTER (WHERE hit) AS hlo, max(${tc}) FILTER (WHERE hit) AS hhi,
         (array_agg(id ORDER BY ${tc} ASC NULLS FIRST, id COLLATE "C") FILTER (WHERE hit))[1:${MAX_ANSWER_IDS}] AS ids,
         array_agg(DISTINCT coalesce(src, 'unknown')) FILTER (WHERE hit) AS sources${also} FROM c`,
    )
    const range = (lo: string | null | undefined, hi: string | null | undefined): { from?: string; to?: string } =>
      lo != null && hi != null ? { from: lo, to: hi } : {}
    collection = { records: row?.n ?? 0, ...range(row?.lo, row?.hi) }
    return {
      records: row?.ids ?? [],
      matched: row?.matched ?? 0,
      // sort() orders by UTF-16 code units, as SQLite's answer sorts them.
      sources: [...(row?.sources ?? [])].sort(),
      ...range(row?.hlo, row?.hhi),
      ...(row !== undefined && scalar !== undefined ? { scalar: row.scalar } : {}),
    }
  }

  const done = (r: Omit<FactQueryResult, 'collection' | 'sql'>): FactQueryResult => ({ ...r, collection, sql: ran })
  const v = q.verb
  switch (v.verb) {
    case 'aggregate': {
      const field = v.measure.fn === 'count' ? undefined : v.measure.field
      const { scalar, ...c } = await contributing(
        (x) => (field !== undefined ? `${x.field(field)} IS NOT NULL` : undefined),
        undefined,
        (x, w) => `(SELECT ${measure(x, v.measure)} FROM r WHERE ${w})`,
      )
      // No record of the counted statuses at all: the statement returned no row, and the measure over none is a
      // count of 0 or unknown.
      const counted = v.measure.fn === 'count' || v.measure.fn === 'distinct'
      const value = (scalar ?? (counted ? 0 : null)) as number | string | null
      const kind = counted ? 'count' : typeof value === 'string' ? 'value' : 'number'
      return done({ kind, value, ...c })
    }
    case 'list': {
      // The rows, in order, as one JSON array computed in the coverage statement.
      const { scalar, ...c } = await contributing(
        () => undefined,
        undefined,
        (x, w) => {
          const order = v.order
            ? `${v.order.dir === 'desc' ? desc(x.field(v.order.field)) : asc(x.field(v.order.field))}, `
            : spec.timeField
              ? `${asc(x.field(spec.timeField))}, `
              : ''
          const rows = `SELECT r.id, r.data, r.status, row_number() OVER (ORDER BY ${order}r.recorded_at, r.rn, r.id COLLATE "C") AS o FROM r WHERE ${w}`
          return `(SELECT json_agg(json_build_object('id', x.id, 'data', x.data, 'status', x.status) ORDER BY x.o) FROM (${rows} ORDER BY o LIMIT ${x.p(v.limit ?? DEFAULT_LIST_LIMIT, 'int')} OFFSET ${x.p(v.offset ?? 0, 'int')}) x)`
        },
      )
      const rows = (scalar ?? []) as { id: string; data: FactValues; status: string }[]
      const value = rows.map((row) => {
        // An activity record's keys in the order its view builds them (as SQLite's), a recorded one's as written.
        const data = activityData.get(row.id) ?? inSpecOrder(row.data, spec)
        const picked =
          v.fields.length > 0
            ? Object.fromEntries(v.fields.map((f) => [f, f === 'id' ? row.id : f === 'status' ? row.status : (data[f] ?? null)]))
            : data
        return { id: row.id, ...picked }
      })
      return done({ kind: 'rows', value, ...c, records: rows.map((r) => r.id) })
    }
    case 'argmax':
    case 'argmin': {
      const { sql, head, w } = start()
      const x = sql.field(v.field)
      const ret = v.return !== undefined ? sql.field(v.return) : 'r.id'
      const best = v.verb === 'argmax' ? 'max' : 'min'
      const tie = tieOrder(sql, v.ties, ret)
      const rows = await exec<{ id: string; ret: FactValue }>(
        sql,
        `${head} SELECT r.id AS id, ${ret} AS ret FROM r WHERE ${w} AND ${x} = (SELECT ${best}(${x}) FROM r WHERE ${w}) ORDER BY ${tie.order}${tie.limit ? ' LIMIT 1' : ''}`,
      )
      const c = await contributing((y) => `${y.field(v.field)} IS NOT NULL`)
      return done(extremeAnswer(rows, c))
    }
    case 'group': {
      const { sql, head, w } = start()
      const listKey = v.key.bucket === undefined && sql.isList(v.key.field)
      const keyKind: ValueKind = listKey ? sql.itemKind(v.key.field) : v.key.bucket !== undefined ? 'text' : sql.kind(v.key.field)
      const keyOf = (y: PgSql): string =>
        listKey
          ? jsonValue('j.value', keyKind)
          : v.key.bucket !== undefined
            ? bucket(y.field(v.key.field), v.key.bucket)
            : y.field(v.key.field)
      const join = listKey ? ` CROSS JOIN LATERAL ${sql.items(v.key.field)} AS j(value)` : ''
      const key = keyOf(sql)
      const m = measure(sql, v.measure)
      const tie =
        'top' in v.pick && (v.pick.ties.rule === 'earliest' || v.pick.ties.rule === 'latest') ? sql.field(v.pick.ties.field) : 'NULL::text'
      const keyOrder = keyKind === 'text' ? 'key COLLATE "C"' : 'key'
      const g = `${head}, g AS (SELECT ${key} AS key, count(*) AS n, ${m} AS m, min(${tie}) AS tmin, max(${tie}) AS tmax FROM r${join} WHERE ${w} AND ${key} IS NOT NULL GROUP BY 1)`
      let text: string
      if ('top' in v.pick) {
        const t = v.pick.ties
        if (t.rule === 'all')
          text = `${g} SELECT key, n, m FROM g WHERE m >= (SELECT m FROM g ORDER BY ${desc('m')} LIMIT 1 OFFSET ${sql.p(v.pick.top - 1, 'int')}) ORDER BY ${desc('m')}, ${keyOrder}`
        else {
          const order =
            t.rule === 'first' ? keyOrder : t.rule === 'earliest' ? `${asc('tmin')}, ${keyOrder}` : `${desc('tmax')}, ${keyOrder}`
          text = `${g} SELECT key, n, m FROM g ORDER BY ${desc('m')}, ${order} LIMIT ${sql.p(v.pick.top, 'int')}`
        }
      } else if ('share' in v.pick) {
        const total = v.measure.fn === 'count' ? 'count(*)' : measure(sql, v.measure)
        const share = '(m::float8 * 100.0::float8 / t.total::float8)'
        text = `${g}, t AS (SELECT ${total} AS total FROM r WHERE ${w}) SELECT key, n, m, ${share} AS share FROM g, t WHERE t.total > 0 AND ${share} ${v.pick.share.op} ${sql.p(v.pick.share.percent, 'float8')} ORDER BY ${desc('m')}, ${keyOrder}`
      } else text = `${g} SELECT key, n, m FROM g ORDER BY ${desc('m')}, ${keyOrder}`
      const rows = await exec<{ key: string | number; n: number; m: number | string | null; share?: number }>(sql, text)
      const groups: FactGroup[] = rows.map((r) => ({
        key: r.key,
        value: r.m,
        count: r.n,
        ...(r.share !== undefined ? { share: r.share } : {}),
      }))
      const keys = groups.map((x) => x.key)
      const arrayCast = keyKind === 'num' ? 'numeric[]' : keyKind === 'bool' ? 'int[]' : 'text[]'
      // A share rests on every filtered record (they make its total); a top or full grouping on its groups' records.
      const c = await contributing(
        (y) => ('share' in v.pick ? undefined : `${keyOf(y)} = ANY(${y.p(keys, arrayCast)})`),
        (y) => (listKey && !('share' in v.pick) ? `${y.items(v.key.field)} AS j(value)` : ''),
      )
      return done({ kind: 'groups', value: groups.map((x) => x.key) as (string | number)[], groups, ...c })
    }
    case 'compare': {
      const a = await resolvePeriod(v.a, v.over)
      const b = await resolvePeriod(v.b, v.over)
      const within = (y: PgSql, p: { from: string; to: string }): string => {
        const o = y.field(v.over)
        return `${o} >= ${y.p(p.from, 'text')} AND ${o} < ${y.p(nextDay(p.to), 'text')}`
      }
      // Both sides' measures are computed in the coverage statement (one round trip), as numbers in a JSON object.
      const { scalar, ...c } = await contributing(
        (y) => `((${within(y, a)}) OR (${within(y, b)}))`,
        undefined,
        (y, w) => {
          const inA = within(y, a)
          const inB = within(y, b)
          return `(SELECT json_build_object('a', ${measure(y, v.measure, inA)}, 'an', count(*) FILTER (WHERE ${inA}), 'b', ${measure(y, v.measure, inB)}, 'bn', count(*) FILTER (WHERE ${inB})) FROM r WHERE ${w})`
        },
      )
      const got = (scalar ?? {}) as { a?: number | null; an?: number; b?: number | null; bn?: number }
      const row = { a: got.a ?? null, an: got.an ?? 0, b: got.b ?? null, bn: got.bn ?? 0 }
      return done({ ...comparisonAnswer(v.measure.fn, a, b, row), ...c })
    }
  }

  /** A relative period (`first year`) as the first or last bucket of the field among the filtered records. */
  async function resolvePeriod(p: Period, over: string): Promise<{ from: string; to: string; label: string }> {
    if ('from' in p) return p
    if (!('relative' in p)) throw unresolvedPeriod(over, p)
    const { sql, head, w } = start()
    const bx = bucket(sql.field(over), p.unit)
    const rows = await exec<{ v: string | null }>(
      sql,
      `${head} SELECT ${p.relative === 'first' ? 'min' : 'max'}(${bx}) AS v FROM r WHERE ${w} AND ${sql.field(over)} IS NOT NULL`,
    )
    const label = rows[0]?.v ?? null
    if (label === null) return { from: '9999-12-31', to: '9999-12-31', label: `${p.relative} ${p.unit} (no records)` }
    return { ...bucketPeriod(String(label), p.unit), label: `${p.relative} ${p.unit} (${label})` }
  }
}
