import { invalidInput } from '../errors.js'
import type { CollectionSpec, FieldSpec } from './fact-types.js'
import { type CalendarClock, calendarRange, isCalendar } from './fact-periods.js'
import {
  type Cond,
  type FactQuery,
  type Literal,
  type Measure,
  nextDay,
  type Period,
  periodName,
  type Tie,
  type Verb,
} from './fact-query.js'
import { describeType } from './fact-values.js'

// Checking a parsed query against its collection: field names (synonyms mapped to their field), value types,
// and what each verb needs of its fields. Pure; storage compiles the result.

/** The record's own columns a query may name besides its fields. */
const PSEUDO_FIELDS: readonly string[] = ['id', 'status']

const NUMERIC = ['integer', 'number', 'money']
const ORDERABLE = [...NUMERIC, 'date', 'datetime', 'time', 'string', 'enum', 'reference']

/** The field a query's name stands for: itself, a synonym of one, or a pseudo-field (`id`, `status`). */
function fieldFor(spec: CollectionSpec, name: string, path: string): FieldSpec {
  if (PSEUDO_FIELDS.includes(name)) return { name, type: 'string' }
  const f =
    spec.fields.find((x) => x.name === name) ??
    spec.fields.find(
      (x) => x.name.toLowerCase() === name.toLowerCase() || (x.synonyms ?? []).some((s) => s.toLowerCase() === name.toLowerCase()),
    )
  if (f) return f
  throw invalidInput(
    path,
    `query: ${spec.name} has no field ${name} (fields: ${[...spec.fields.map((x) => x.name), ...PSEUDO_FIELDS].join(', ')})`,
  )
}

function need(f: FieldSpec, allowed: readonly string[], path: string, what: string): void {
  if (f.type === 'list' || !allowed.includes(f.type))
    throw invalidInput(path, `query: ${what} needs ${allowed.join(' or ')} (${f.name} is ${describeType(f)})`)
}

/**
 * The query with every field name replaced by its field's name, checked against the collection.
 * @throws {MnemoError} `INVALID_INPUT` — path `query.<part>`: an unknown field, a value of the wrong type for its
 *   field, or a verb given a field it cannot use (the average of a text field).
 */
export function resolveQuery(q: FactQuery, spec: CollectionSpec, clock?: CalendarClock): FactQuery {
  const out: FactQuery = { ...q, verb: resolveVerb(q.verb, spec, clock) }
  if (q.where) out.where = resolveCond(q.where, spec, clock)
  return out
}

/** A calendar period as the day range it names today; other periods as they are. */
function onCalendar(p: Period, clock: CalendarClock | undefined, path: string): Period {
  if (!isCalendar(p)) return p
  if (clock === undefined) throw invalidInput(path, `query: "${periodName(p)}" needs the clock, and none was given`)
  return calendarRange(p, clock.today)
}

function resolveCond(c: Cond, spec: CollectionSpec, clock: CalendarClock | undefined): Cond {
  if ('and' in c) return { and: c.and.map((x) => resolveCond(x, spec, clock)) }
  if ('or' in c) return { or: c.or.map((x) => resolveCond(x, spec, clock)) }
  if ('not' in c) return { not: resolveCond(c.not, spec, clock) }
  const path = `query.where.${c.field}`
  const f = fieldFor(spec, c.field, path)
  const field = f.name
  switch (c.op) {
    case 'null':
    case 'not-null':
      return { field, op: c.op }
    case 'contains':
      need(f, ['string', 'enum', 'reference'], path, '"contains"')
      return { field, op: 'contains', value: c.value }
    case 'has':
      if (f.type !== 'list')
        throw invalidInput(path, `query: "has" needs a list field (${f.name} is ${describeType(f)}); use = for one value`)
      return { field, op: 'has', value: literalFor({ ...f, type: f.items ?? 'string' }, c.value, path) }
    case 'within': {
      need(f, ['date', 'datetime'], path, `"in ${periodName(c.period)}"`)
      const period = onCalendar(c.period, clock, path)
      // A datetime within a calendar period: from the local midnight it starts at to the one after its last day.
      if (isCalendar(c.period) && f.type === 'datetime' && 'from' in period)
        return {
          and: [
            { field, op: '>=', value: { kind: 'datetime', value: clock!.dayStart(period.from) } },
            { field, op: '<', value: { kind: 'datetime', value: clock!.dayStart(nextDay(period.to)) } },
          ],
        }
      return { field, op: 'within', period }
    }
    case 'in':
      return { field, op: 'in', values: c.values.map((v) => literalFor(f, v, path)) }
    case 'between':
      need(f, ORDERABLE, path, '"between"')
      return { field, op: 'between', low: literalFor(f, c.low, path), high: literalFor(f, c.high, path) }
    default:
      if (f.type === 'list') throw invalidInput(path, `query: ${f.name} is ${describeType(f)}; use "${f.name} has <value>"`)
      if (f.type === 'boolean' && c.op !== '=' && c.op !== '!=')
        throw invalidInput(path, `query: ${f.name} is a boolean; compare it with = or !=`)
      return { field, op: c.op, value: literalFor(f, c.value, path) }
  }
}

/** A literal checked against its field's type (a number for a number field, a date for a date field, …). */
function literalFor(f: FieldSpec, v: Literal, path: string): Literal {
  const ok = (() => {
    switch (f.type) {
      case 'integer':
      case 'number':
      case 'money':
        return v.kind === 'number'
      case 'boolean':
        return v.kind === 'boolean'
      case 'date':
        return v.kind === 'date'
      case 'datetime':
        return v.kind === 'datetime' || v.kind === 'date'
      case 'time':
        return v.kind === 'time'
      case 'enum':
        return v.kind === 'string'
      default:
        return v.kind === 'string'
    }
  })()
  if (!ok)
    throw invalidInput(
      path,
      `query: ${f.name} is ${describeType(f)}, but ${JSON.stringify(v.value)} is a ${v.kind}`,
      f.type === 'string' || f.type === 'enum' ? 'quote text values: purpose = "business"' : undefined,
    )
  if (f.type === 'enum' && v.kind === 'string' && f.values && !f.values.includes(v.value)) {
    throw invalidInput(path, `query: ${f.name} is one of ${f.values.join(', ')} (got ${JSON.stringify(v.value)})`)
  }
  return v
}

function resolveMeasure(m: Measure, spec: CollectionSpec, path: string): Measure {
  if (m.fn === 'count') return m
  const f = fieldFor(spec, m.field, path)
  if (m.fn === 'sum' || m.fn === 'avg') need(f, NUMERIC, path, `${m.fn}`)
  else if (m.fn === 'min' || m.fn === 'max') need(f, ORDERABLE, path, `${m.fn}`)
  else if (f.type === 'list') throw invalidInput(path, `query: distinct needs a single-valued field (${f.name} is ${describeType(f)})`)
  return { fn: m.fn, field: f.name }
}

function resolveTie(t: Tie, spec: CollectionSpec, path: string): Tie {
  if (t.rule === 'all' || t.rule === 'first') return t
  const f = fieldFor(spec, t.field, path)
  need(f, ORDERABLE, path, `ties ${t.rule}`)
  return { rule: t.rule, field: f.name }
}

function resolveVerb(v: Verb, spec: CollectionSpec, clock: CalendarClock | undefined): Verb {
  switch (v.verb) {
    case 'aggregate':
      return { verb: 'aggregate', measure: resolveMeasure(v.measure, spec, 'query.measure') }
    case 'list': {
      const out: Verb = { verb: 'list', fields: v.fields.map((f) => fieldFor(spec, f, `query.list.${f}`).name) }
      if (v.order) {
        const f = fieldFor(spec, v.order.field, `query.order.${v.order.field}`)
        need(f, ORDERABLE, `query.order.${v.order.field}`, 'order by')
        out.order = { field: f.name, dir: v.order.dir }
      }
      if (v.limit !== undefined) {
        if (v.limit < 1 || v.limit > 1000) throw invalidInput('query.limit', `query: limit must be 1–1000 (got ${v.limit})`)
        out.limit = v.limit
      }
      if (v.offset !== undefined) {
        if (!Number.isInteger(v.offset) || v.offset < 0)
          throw invalidInput('query.offset', `query: offset must be a whole number ≥ 0 (got ${v.offset})`)
        out.offset = v.offset
      }
      return out
    }
    case 'argmax':
    case 'argmin': {
      const f = fieldFor(spec, v.field, `query.${v.verb}.${v.field}`)
      need(f, ORDERABLE, `query.${v.verb}.${v.field}`, v.verb)
      return {
        verb: v.verb,
        field: f.name,
        ...(v.return !== undefined ? { return: fieldFor(spec, v.return, `query.return.${v.return}`).name } : {}),
        ties: resolveTie(v.ties, spec, 'query.ties'),
      }
    }
    case 'group': {
      const path = `query.group.${v.key.field}`
      const f = fieldFor(spec, v.key.field, path)
      if (v.key.bucket !== undefined) need(f, ['date', 'datetime'], path, `${v.key.bucket}(…)`)
      else if (f.type === 'list' && f.items !== undefined && !['string', 'enum', 'reference', 'integer', 'date'].includes(f.items)) {
        throw invalidInput(path, `query: cannot group by ${describeType(f)}`)
      }
      const measure = resolveMeasure(v.measure, spec, 'query.measure')
      if ('share' in v.pick && measure.fn !== 'count' && measure.fn !== 'sum')
        throw invalidInput('query.share', `query: a share needs count or sum as its measure (got ${measure.fn})`)
      if ('top' in v.pick && (v.pick.top < 1 || v.pick.top > 1000))
        throw invalidInput('query.top', `query: top must be 1–1000 (got ${v.pick.top})`)
      const pick = 'top' in v.pick ? { top: v.pick.top, ties: resolveTie(v.pick.ties, spec, 'query.ties') } : v.pick
      return { verb: 'group', key: { field: f.name, ...(v.key.bucket ? { bucket: v.key.bucket } : {}) }, measure, pick }
    }
    case 'compare': {
      const f = fieldFor(spec, v.over, `query.over.${v.over}`)
      need(f, ['date', 'datetime'], `query.over.${v.over}`, 'compare … over')
      return {
        ...v,
        measure: resolveMeasure(v.measure, spec, 'query.measure'),
        over: f.name,
        a: onCalendar(v.a, clock, 'query.compare'),
        b: onCalendar(v.b, clock, 'query.compare'),
      }
    }
  }
}

/** Whether a condition names the `status` pseudo-field (then no default status filter applies). */
export function mentionsStatus(c: Cond | undefined): boolean {
  if (c === undefined) return false
  if ('and' in c) return c.and.some(mentionsStatus)
  if ('or' in c) return c.or.some(mentionsStatus)
  if ('not' in c) return mentionsStatus(c.not)
  return c.field === 'status'
}
