import { type BucketUnit, type Cond, type Literal, type Measure, nextDay, type Tie, unresolvedPeriod } from '../../core/facts/fact-query.js'
import type { CollectionSpec, FactValue, FactValues } from '../../core/facts/fact-types.js'

// The pieces of a fact query's SQL on PostgreSQL: field values out of the jsonb column `r.data`, typed by the
// collection's spec so they compare, sort and aggregate as SQLite's json_extract values do there (numbers as numeric,
// booleans as 1/0, text in bytewise "C" order with NULLs before values), conditions, time buckets and measures.

/** How a value compares: a number, a boolean (as 1/0, as SQLite reads JSON booleans), or text. */
export type ValueKind = 'num' | 'bool' | 'text'

const NUMERIC_TYPES: readonly string[] = ['integer', 'number', 'money']

function kindOf(type: string | undefined): ValueKind {
  if (type !== undefined && NUMERIC_TYPES.includes(type)) return 'num'
  return type === 'boolean' ? 'bool' : 'text'
}

/** The PostgreSQL type a parameter compared with a value of a kind is cast to. */
const CAST: Record<ValueKind, string> = { num: 'numeric', bool: 'int', text: 'text' }

/** A jsonb value (`j`, SQL) as a SQL value of a kind: NULL when the JSON value is null or of another type. */
export function jsonValue(j: string, kind: ValueKind): string {
  switch (kind) {
    case 'num':
      return `(CASE WHEN jsonb_typeof(${j}) = 'number' THEN (${j} #>> '{}')::numeric END)`
    case 'bool':
      return `(CASE ${j} WHEN 'true'::jsonb THEN 1 WHEN 'false'::jsonb THEN 0 END)`
    case 'text':
      return `((${j} #>> '{}') COLLATE "C")`
  }
}

/** The SQL text of one statement under construction, with its positional parameters. */
export class PgSql {
  readonly params: unknown[] = []
  private readonly keys = new Map<string, string>()

  constructor(readonly spec: CollectionSpec) {}

  /** A parameter holding `value`, cast to `cast` when given. */
  p(value: unknown, cast?: string): string {
    this.params.push(value)
    return `$${this.params.length}${cast !== undefined ? `::${cast}` : ''}`
  }

  /** The parameter holding a field's name (one per field and statement). */
  key(name: string): string {
    let k = this.keys.get(name)
    if (k === undefined) {
      k = this.p(name, 'text')
      this.keys.set(name, k)
    }
    return k
  }

  type(name: string): string | undefined {
    return this.spec.fields.find((f) => f.name === name)?.type
  }

  isList(name: string): boolean {
    return this.type(name) === 'list'
  }

  /** How a field's values compare (`id` and `status` are text; a list is its JSON text, as SQLite reads it). */
  kind(name: string): ValueKind {
    return name === 'id' || name === 'status' ? 'text' : kindOf(this.type(name))
  }

  /** A list field's item kind. */
  itemKind(name: string): ValueKind {
    return kindOf(this.spec.fields.find((f) => f.name === name)?.items ?? 'string')
  }

  /** The SQL expression of a field (the record's id and status are columns). */
  field(name: string): string {
    if (name === 'id') return '(r.id COLLATE "C")'
    if (name === 'status') return '(r.status COLLATE "C")'
    return jsonValue(`(r.data->${this.key(name)})`, this.kind(name))
  }

  /** The items of a list field as a set-returning expression (none for a value that is not an array). */
  items(name: string): string {
    const j = `r.data->${this.key(name)}`
    return `jsonb_array_elements(CASE WHEN jsonb_typeof(${j}) = 'array' THEN ${j} ELSE '[]'::jsonb END)`
  }

  /** A literal as a parameter of the field's kind. */
  literal(field: string, v: Literal): string {
    const kind = this.kind(field)
    if (v.kind === 'boolean') return this.p(v.value ? 1 : 0, CAST[kind])
    return this.p(v.value, CAST[kind])
  }
}

/** Ascending with NULLs first and descending with NULLs last: SQLite's order. */
export function asc(expr: string): string {
  return `${expr} ASC NULLS FIRST`
}
export function desc(expr: string): string {
  return `${expr} DESC NULLS LAST`
}

const DATE_PREFIX = String.raw`'^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])'`

/** The bucket label of a date or datetime text (`2024-03-05`, `2024-03`, `2024`, `2024-Q1`, `2024-H1`, ISO `2024-W09`). */
export function bucket(expr: string, unit: BucketUnit): string {
  switch (unit) {
    case 'day':
      return `substr(${expr}, 1, 10)`
    case 'month':
      return `substr(${expr}, 1, 7)`
    case 'year':
      return `substr(${expr}, 1, 4)`
    case 'quarter':
      return `(CASE WHEN ${expr} ~ ${DATE_PREFIX} THEN substr(${expr}, 1, 4) || '-Q' || ((substr(${expr}, 6, 2)::int + 2) / 3) END)`
    case 'half':
      return `(CASE WHEN ${expr} ~ ${DATE_PREFIX} THEN substr(${expr}, 1, 4) || '-H' || ((substr(${expr}, 6, 2)::int + 5) / 6) END)`
    case 'week':
      return `(CASE WHEN ${expr} ~ ${DATE_PREFIX} THEN to_char(substr(${expr}, 1, 10)::date, 'IYYY-"W"IW') END)`
  }
}

/** A condition as SQL (NULL where a value is missing, as in SQLite). */
export function cond(sql: PgSql, c: Cond): string {
  if ('and' in c) return `(${c.and.map((x) => cond(sql, x)).join(' AND ')})`
  if ('or' in c) return `(${c.or.map((x) => cond(sql, x)).join(' OR ')})`
  if ('not' in c) return `NOT coalesce(${cond(sql, c.not)}, false)`
  const x = sql.field(c.field)
  switch (c.op) {
    case 'null':
      return `${x} IS NULL`
    case 'not-null':
      return `${x} IS NOT NULL`
    case 'contains':
      // lower() under "C" folds ASCII only, as SQLite's does.
      return `strpos(lower(${x}), lower(${sql.p(c.value, 'text')})) > 0`
    case 'has': {
      const kind = sql.itemKind(c.field)
      const cast = kind === 'num' ? 'numeric' : kind === 'bool' ? 'boolean' : 'text'
      return `(r.data->${sql.key(c.field)}) @> jsonb_build_array(${sql.p(c.value.value, cast)})`
    }
    case 'within': {
      if (!('from' in c.period)) throw unresolvedPeriod(c.field, c.period)
      return `(${x} >= ${sql.p(c.period.from, 'text')} AND ${x} < ${sql.p(nextDay(c.period.to), 'text')})`
    }
    case 'in':
      return `${x} IN (${c.values.map((v) => sql.literal(c.field, v)).join(', ')})`
    case 'between': {
      // An inclusive date range ends at the end of its last day for a datetime field.
      const high =
        c.high.kind === 'date' && sql.type(c.field) === 'datetime'
          ? `${x} < ${sql.p(nextDay(c.high.value), 'text')}`
          : `${x} <= ${sql.literal(c.field, c.high)}`
      return `(${x} >= ${sql.literal(c.field, c.low)} AND ${high})`
    }
    default:
      return `${x} ${c.op} ${sql.literal(c.field, c.value)}`
  }
}

/**
 * A measure as SQL, optionally over the rows of `filter` only. Sums are exact (numeric) then rounded to a double; an
 * average is that sum over the count of values, as SQLite computes it; min and max keep the field's kind.
 */
export function measure(sql: PgSql, m: Measure, filter?: string): string {
  const f = filter !== undefined ? ` FILTER (WHERE ${filter})` : ''
  if (m.fn === 'count') return `count(*)${f}`
  const x = sql.field(m.field)
  switch (m.fn) {
    case 'distinct':
      return `count(DISTINCT ${x})${f}`
    case 'sum':
      return `(sum(${x})${f})::float8`
    case 'avg':
      return `((sum(${x})${f})::float8 / nullif(count(${x})${f}, 0))`
    default:
      return `${m.fn}(${x})${f}`
  }
}

/** The order of the rows that tie for an argmax or argmin, and whether one of them is picked. */
export function tieOrder(sql: PgSql, t: Tie, ret: string): { order: string; limit: boolean } {
  if (t.rule === 'all') return { order: 'r.recorded_at, r.id COLLATE "C"', limit: false }
  if (t.rule === 'first') return { order: `${asc(ret)}, r.id COLLATE "C"`, limit: true }
  const x = sql.field(t.field)
  return { order: `${t.rule === 'earliest' ? asc(x) : desc(x)}, r.id COLLATE "C"`, limit: true }
}

/**
 * A record's values with its fields in the order of its collection's spec (as written), others after: jsonb keeps
 * keys in its own order, SQLite's JSON in the written one, and answers list them as written.
 */
export function inSpecOrder(values: FactValues, spec: CollectionSpec | undefined): FactValues {
  if (spec === undefined) return values
  const out: FactValues = {}
  for (const f of spec.fields) if (f.name in values) out[f.name] = values[f.name] as FactValue
  for (const [k, v] of Object.entries(values)) if (!(k in out)) out[k] = v
  return out
}
