import type { FactQuery } from './fact-query.js'
import type { FactValue } from './fact-types.js'

/** A group of a `group by` answer. */
export interface FactGroup {
  key: string | number
  /** The measure over the group (its count, sum, …). */
  value: number | string | null
  /** Records in the group. */
  count: number
  /** Percent of the total (share answers). */
  share?: number
}

/** One side of a `compare` answer. */
export interface FactPeriodValue {
  label: string
  from: string
  to: string
  value: number | null
  count: number
}

/** What storage computes for a query, before the engine renders it (see `FactAnswer`). */
export interface FactQueryResult {
  kind: 'count' | 'number' | 'value' | 'values' | 'groups' | 'rows' | 'comparison'
  value: number | string | null | (string | number)[] | FactGroup[] | Record<string, FactValue>[]
  groups?: FactGroup[]
  comparison?: {
    a: FactPeriodValue
    b: FactPeriodValue
    delta: number | null
    ratio: number | null
    direction: 'increase' | 'decrease' | 'same' | 'unknown'
  }
  /** Ids of the records the answer rests on (at most 1000, time order). */
  records: string[]
  /** How many records the answer rests on (all of them, not only the ids listed). */
  matched: number
  /** The time field's range over those records (ISO), when the collection has one. */
  from?: string
  to?: string
  /** Provenance sources of those records (`user`, `import`, …). */
  sources: string[]
  /** The collection's records (of the counted statuses) and their time range, whatever the filter. */
  collection: { records: number; from?: string; to?: string }
  /** The statements run, in order, with their parameters. */
  sql: { sql: string; params: unknown[] }[]
}

/** Most record ids an answer lists (its `records`), in both dialects; counts and coverage still cover every record. */
export const MAX_ANSWER_IDS = 1000

/**
 * The answer of an argmax / argmin query from its winning rows (`ret`: the returned field, null when the record has
 * none) and its coverage: one winner is a `value`, several (ties kept by the tie rule) are `values` without nulls, none
 * is a null `value`. The winners' ids come first in `records` (they are what the answer names), then the other
 * contributing records, at most `MAX_ANSWER_IDS`.
 */
export function extremeAnswer<C extends { records: string[] }>(
  rows: readonly { id: string; ret: FactValue }[],
  coverage: C,
): C & { kind: 'value' | 'values'; value: string | number | null | (string | number)[] } {
  const values = rows.map((r) => (r.ret === null ? null : (r.ret as string | number)))
  return {
    kind: values.length > 1 ? 'values' : 'value',
    value:
      values.length === 0 ? null : values.length === 1 ? (values[0] ?? null) : (values.filter((x) => x !== null) as (string | number)[]),
    ...coverage,
    records: [...rows.map((r) => r.id), ...coverage.records.filter((id) => !rows.some((r) => r.id === id))].slice(0, MAX_ANSWER_IDS),
  }
}

/**
 * The answer of a `compare` query from each period's measure and record count: a count, sum or distinct over no
 * records is 0, an average or extreme over none is null (unknown); `delta` is b − a, `ratio` b / a (null when a is 0
 * or either side unknown), and the direction (`increase`, `decrease`, `same`, `unknown`) is the answer's value.
 */
export function comparisonAnswer(
  fn: string,
  a: { from: string; to: string; label: string },
  b: { from: string; to: string; label: string },
  row: { a: number | null; an: number; b: number | null; bn: number },
): { kind: 'comparison'; value: string; comparison: NonNullable<FactQueryResult['comparison']> } {
  const zero = fn === 'count' || fn === 'sum' || fn === 'distinct'
  const av = row.a ?? (zero ? 0 : null)
  const bv = row.b ?? (zero ? 0 : null)
  const delta = av !== null && bv !== null ? bv - av : null
  const direction = delta === null ? 'unknown' : delta > 0 ? 'increase' : delta < 0 ? 'decrease' : 'same'
  const side = (p: { from: string; to: string; label: string }, value: number | null, count: number): FactPeriodValue => ({
    label: p.label,
    from: p.from,
    to: p.to,
    value,
    count,
  })
  return {
    kind: 'comparison',
    value: direction,
    comparison: {
      a: side(a, av, row.an),
      b: side(b, bv, row.bn),
      delta,
      ratio: av !== null && bv !== null && av !== 0 ? bv / av : null,
      direction,
    },
  }
}

/**
 * The answer to a fact query: its value and kind, the records it rests on, and its coverage, with a one-line
 * rendering. An answer over no records says so (`empty`, and the text names the collection's extent) rather than
 * standing as a bare 0.
 */
export interface FactAnswer {
  collection: string
  /** The query as resolved (field synonyms replaced by field names). */
  query: FactQuery
  kind: FactQueryResult['kind']
  value: FactQueryResult['value']
  groups?: FactGroup[]
  comparison?: FactQueryResult['comparison']
  /** Ids of the records it rests on, in time order (winners first for argmax), at most 1000. */
  records: string[]
  coverage: {
    /** Records the answer rests on. */
    matched: number
    /** Their time range (the collection's time field, ISO), when known. */
    from?: string
    to?: string
    /** Their provenance sources. */
    sources: string[]
    /** Which statuses were counted. */
    statuses: string
    /** The collection's records of those statuses, whatever the filter, and their time range. */
    collection: { records: number; from?: string; to?: string }
  }
  /** No record matched. */
  empty: boolean
  /** One line for a person: the value, with what it rests on. */
  text: string
  /** With `explain`: the SQL statements run, with their parameters. */
  sql?: FactQueryResult['sql']
}

function num(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Math.round(n * 100) / 100)
}

/**
 * The bare value as text (`42`, `7.62`, `Thailand`, `["a","b"]`, `increase`): what a scorer compares. Numbers
 * keep at most two decimals; `null` is ''.
 *
 * @example
 * import { answerValueText } from 'mnemo'
 * console.log(answerValueText({ kind: 'number', value: 7.625 })) // → 7.63
 * console.log(answerValueText({ kind: 'values', value: ['Lisbon', 'Porto'] })) // → ["Lisbon","Porto"]
 */
export function answerValueText(a: Pick<FactAnswer, 'kind' | 'value'>): string {
  const v = a.value
  if (v === null) return ''
  if (typeof v === 'number') return num(v)
  if (typeof v === 'string') return v
  if (a.kind === 'rows') return JSON.stringify(v)
  return JSON.stringify(v)
}

/** Builds the answer from storage's result; see `FactAnswer`. */
export function toFactAnswer(query: FactQuery, r: FactQueryResult, explain: boolean): FactAnswer {
  const statuses = query.status ?? 'done'
  const coverage: FactAnswer['coverage'] = {
    matched: r.matched,
    ...(r.from !== undefined ? { from: r.from } : {}),
    ...(r.to !== undefined ? { to: r.to } : {}),
    sources: r.sources,
    statuses,
    collection: r.collection,
  }
  const extent =
    r.collection.records === 0
      ? `no ${query.collection} records${statuses === 'any' ? '' : ` with status ${statuses}`} are stored`
      : `${query.collection} holds ${r.collection.records} ${statuses === 'any' ? '' : `${statuses} `}records${r.collection.from !== undefined ? ` from ${r.collection.from} to ${r.collection.to}` : ''}`
  const empty = r.matched === 0
  const rests = `over ${r.matched} record${r.matched === 1 ? '' : 's'}${r.from !== undefined ? ` from ${r.from} to ${r.to}` : ''}`
  let text: string
  if (empty && r.kind !== 'comparison') {
    text = `${r.kind === 'count' ? '0: ' : r.kind === 'groups' ? 'none: ' : ''}no ${query.collection} record matches the query (${extent})`
  } else {
    switch (r.kind) {
      case 'count':
        text = `${answerValueText(r)} (${rests})`
        break
      case 'number':
      case 'value':
        text = `${answerValueText(r)} (${rests})`
        break
      case 'values':
        text = `${(r.value as (string | number)[]).join(', ')} (tied; ${rests})`
        break
      case 'groups': {
        const groups = r.groups ?? []
        text =
          groups.length === 0
            ? `none (${rests})`
            : `${groups.map((g) => `${g.key} (${g.share !== undefined ? `${num(g.share)}%` : num(typeof g.value === 'number' ? g.value : Number(g.value))})`).join(', ')} (${rests})`
        break
      }
      case 'comparison': {
        const c = r.comparison!
        text = `${c.direction} (${c.a.label}: ${c.a.value === null ? 'unknown' : num(c.a.value)} over ${c.a.count} → ${c.b.label}: ${c.b.value === null ? 'unknown' : num(c.b.value)} over ${c.b.count}${c.delta !== null ? `, ${c.delta >= 0 ? '+' : ''}${num(c.delta)}` : ''})`
        if (c.a.count === 0 && c.b.count === 0)
          text = `unknown: no ${query.collection} record falls in ${c.a.label} or ${c.b.label} (${extent})`
        break
      }
      case 'rows':
        text = `${(r.value as unknown[]).length} of ${r.matched} record${r.matched === 1 ? '' : 's'}`
        break
    }
  }
  return {
    collection: query.collection,
    query,
    kind: r.kind,
    value: r.value,
    ...(r.groups ? { groups: r.groups } : {}),
    ...(r.comparison ? { comparison: r.comparison } : {}),
    records: r.records,
    coverage,
    empty,
    text,
    ...(explain ? { sql: r.sql } : {}),
  }
}
