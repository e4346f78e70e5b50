import { invalidInput, type MnemoError } from '../errors.js'
import { FACT_STATUSES, type FactStatus } from './fact-types.js'
import { isDate } from './fact-values.js'

/**
 * The fact query language (docs/FACTS.md "The query"), parsed into an AST that storage compiles to parameterised
 * SQL. One statement: a collection, optional clauses, one verb.
 *
 * ```
 * query   := "from" NAME { "where" cond | "as of" DATE | "status" (STATUS | "any") } verb
 * verb    := "count" | AGG FIELD | "list" [FIELD {"," FIELD}] ["order by" FIELD ["asc"|"desc"]] ["limit" INT]
 *          | ("argmax" | "argmin") FIELD ["return" FIELD] ["ties" TIE]
 *          | "group by" KEY [MEASURE] ("top" INT ["ties" TIE] | "share" (">=" | ">") NUMBER "%" | "all")
 *          | "compare" MEASURE "over" FIELD PERIOD "vs" PERIOD
 * AGG     := "sum" | "avg" | "min" | "max" | "distinct"          MEASURE := "count" | AGG FIELD
 * KEY     := FIELD | UNIT "(" FIELD ")"                           UNIT := day | week | month | quarter | half | year
 * TIE     := "all" | "first" | "earliest" FIELD | "latest" FIELD
 * PERIOD  := 2024 | 2024-Q4 | 2024-H1 | 2024-03 | 2024-03-05 | DATE ".." DATE | ("first" | "last") UNIT
 *          | ("this" | "previous") UNIT | "past" INT "days"
 * ```
 *
 * `first UNIT` / `last UNIT` are the first / last bucket holding records (compare only); `this week` is the calendar
 * week holding today, `previous week` the one before it ("last week" in speech), `past 7 days` today and the 6
 * days before it, all on the clock in the user's time zone (a datetime field's bounds are its local midnights).
 *
 * ```
 * cond    := conj {"or" conj}    conj := unary {"and" unary}    unary := "not" unary | "(" cond ")" | pred
 * pred    := FIELD ("=" | "!=" | "<" | "<=" | ">" | ">=") VALUE | FIELD "between" VALUE "and" VALUE
 *          | FIELD "in" "(" VALUE {"," VALUE} ")" | FIELD "in" PERIOD | FIELD "has" VALUE
 *          | FIELD "contains" STRING | FIELD "is" ["not"] "null"
 * VALUE   := "text" | 'text' | NUMBER | DATE | DATETIME | HH:MM | true | false
 * ```
 */

/** A literal with the kind of token it was written as. */
export type Literal =
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: number }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'date'; value: string }
  | { kind: 'datetime'; value: string }
  | { kind: 'time'; value: string }

const BUCKET_UNITS = ['day', 'week', 'month', 'quarter', 'half', 'year'] as const
export type BucketUnit = (typeof BUCKET_UNITS)[number]

/**
 * A period relative to today, resolved against the clock in the user's time zone (fact-periods.ts): the calendar unit
 * holding today (`this week`) or the one before it (`previous week`), or the N days ending today (`past 7 days`).
 */
export type CalendarPeriod = { calendar: 'this' | 'previous'; unit: BucketUnit } | { past: number; unit: 'day' }

/** An inclusive range of days (ISO dates) and how answers name it. */
type DayRange = { from: string; to: string; label: string }

/** A period: an inclusive day range, the first / last bucket of a unit in the data, or a calendar period. */
export type Period = DayRange | { relative: 'first' | 'last'; unit: BucketUnit } | CalendarPeriod

/**
 * The error for a period a store cannot run as a day range: `first` / `last` UNIT outside compare, or a calendar
 * period that was not resolved against the clock (`resolveQuery` with a `CalendarClock` resolves them).
 */
export function unresolvedPeriod(field: string, p: Period): MnemoError {
  return 'relative' in p
    ? invalidInput(
        `query.where.${field}`,
        `query: "in ${periodName(p)}" is the ${p.relative} ${p.unit} holding records, for compare; give a period (2024, 2024-Q4, this ${p.unit}, previous ${p.unit}, …)`,
      )
    : invalidInput(`query.where.${field}`, `query: "in ${periodName(p)}" needs the clock: resolve the query with a calendar first`)
}

/** How a query writes a period: `2024-Q4`, `first year`, `this week`, `past 7 days`. */
export function periodName(p: Period): string {
  if ('relative' in p) return `${p.relative} ${p.unit}`
  if ('calendar' in p) return `${p.calendar} ${p.unit}`
  if ('past' in p) return `past ${p.past} day${p.past === 1 ? '' : 's'}`
  return p.label
}

type Comparison = '=' | '!=' | '<' | '<=' | '>' | '>='
export type Cond =
  | { and: Cond[] }
  | { or: Cond[] }
  | { not: Cond }
  | { field: string; op: Comparison; value: Literal }
  | { field: string; op: 'between'; low: Literal; high: Literal }
  | { field: string; op: 'in'; values: Literal[] }
  | { field: string; op: 'within'; period: Period }
  | { field: string; op: 'has'; value: Literal }
  | { field: string; op: 'contains'; value: string }
  | { field: string; op: 'null' | 'not-null' }

const AGGREGATES = ['sum', 'avg', 'min', 'max', 'distinct'] as const
type Aggregate = (typeof AGGREGATES)[number]
export type Measure = { fn: 'count' } | { fn: Aggregate; field: string }
export type Tie = { rule: 'all' } | { rule: 'first' } | { rule: 'earliest' | 'latest'; field: string }
interface GroupKey {
  field: string
  bucket?: BucketUnit
}

export type Verb =
  | { verb: 'aggregate'; measure: Measure }
  /** `offset` (rows to skip, JSON form only: the viewer's pages) has no text syntax. */
  | { verb: 'list'; fields: string[]; order?: { field: string; dir: 'asc' | 'desc' }; limit?: number; offset?: number }
  | { verb: 'argmax' | 'argmin'; field: string; return?: string; ties: Tie }
  | {
      verb: 'group'
      key: GroupKey
      measure: Measure
      pick: { top: number; ties: Tie } | { share: { op: '>=' | '>'; percent: number } } | { all: true }
    }
  | { verb: 'compare'; measure: Measure; over: string; a: Period; b: Period }

/** A parsed query: the JSON form of the language (what the MCP tool and the library accept as well as text). */
export interface FactQuery {
  collection: string
  where?: Cond
  /** Record time (ISO date or datetime): answer from what was recorded by then. */
  asOf?: string
  /** Which statuses count: one, or `any`. Default: `done`, unless `where` names `status`. */
  status?: FactStatus | 'any'
  verb: Verb
}

/** What a period may be, as parse errors list it. */
const PERIODS =
  'a period (2024, 2024-Q4, 2024-H1, 2024-03, a date, DATE..DATE, first UNIT, last UNIT, this UNIT, previous UNIT, past N days)'
/** Most days `past N days` may span (10 years). */
const MAX_PAST_DAYS = 3660

/** Longest query text, characters. */
export const MAX_QUERY_CHARS = 4000

type Tok = { t: 'str' | 'num' | 'date' | 'datetime' | 'time' | 'quarter' | 'half' | 'month' | 'word' | 'sym'; v: string; at: number }

const TOKEN = new RegExp(
  [
    String.raw`(?<ws>\s+)`,
    String.raw`(?<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')`,
    String.raw`(?<datetime>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2})?)`,
    String.raw`(?<date>\d{4}-\d{2}-\d{2})`,
    String.raw`(?<quarter>\d{4}-Q[1-4])`,
    String.raw`(?<half>\d{4}-H[12])`,
    String.raw`(?<month>\d{4}-\d{2})(?![\d:])`,
    String.raw`(?<time>\d{2}:\d{2}(?::\d{2})?)`,
    String.raw`(?<num>-?\d+(?:\.\d+)?)`,
    String.raw`(?<word>[A-Za-z_][A-Za-z0-9_]*)`,
    String.raw`(?<sym>>=|<=|!=|<>|\.\.|[=<>(),%])`,
  ].join('|'),
  'y',
)

function tokenize(text: string): Tok[] {
  const out: Tok[] = []
  TOKEN.lastIndex = 0
  let at = 0
  while (at < text.length) {
    TOKEN.lastIndex = at
    const m = TOKEN.exec(text)
    if (!m?.groups) throw invalidInput('query', `query: cannot read ${JSON.stringify(text.slice(at, at + 12))} at character ${at + 1}`)
    const g = Object.entries(m.groups).find(([, v]) => v !== undefined)
    if (g && g[0] !== 'ws') {
      const [kind, raw] = g as [Tok['t'], string]
      out.push({ t: kind, v: kind === 'str' ? unquote(raw) : raw, at })
    }
    at += m[0].length
  }
  return out
}

function unquote(raw: string): string {
  return raw.slice(1, -1).replace(/\\(.)/g, '$1')
}

/**
 * Parses query text into a `FactQuery`. Keywords are case-insensitive; field and collection names are not checked
 * here (see `resolveQuery`).
 * @throws {MnemoError} `INVALID_INPUT` (path `query`) naming what was expected and the word found, with its position.
 *
 * @example
 * import { parseFactQuery } from 'mnemo'
 * const q = parseFactQuery('from expenses where category = "food" sum amount')
 * console.log(q.collection, q.verb.verb, JSON.stringify(q.where)) // → expenses aggregate {"field":"category","op":"=","value":{"kind":"string","value":"food"}}
 */
export function parseFactQuery(text: string): FactQuery {
  if (text.length > MAX_QUERY_CHARS)
    throw invalidInput('query', `query is ${text.length} characters, above the limit of ${MAX_QUERY_CHARS}`)
  return new Parser(tokenize(text)).query()
}

class Parser {
  private i = 0
  constructor(private readonly toks: Tok[]) {}

  private peek(offset = 0): Tok | undefined {
    return this.toks[this.i + offset]
  }

  private isWord(word: string, offset = 0): boolean {
    const t = this.peek(offset)
    return t !== undefined && t.t === 'word' && t.v.toLowerCase() === word
  }

  private isSym(sym: string): boolean {
    const t = this.peek()
    return t !== undefined && t.t === 'sym' && t.v === sym
  }

  private fail(expected: string): never {
    const t = this.peek()
    const found = t === undefined ? 'the end of the query' : `${JSON.stringify(t.v)} at character ${t.at + 1}`
    throw invalidInput('query', `query: expected ${expected}, found ${found}`, 'see `mnemo facts query --help` for the grammar')
  }

  private word(word: string): void {
    if (!this.isWord(word)) this.fail(`"${word}"`)
    this.i++
  }

  private sym(sym: string): void {
    if (!this.isSym(sym)) this.fail(`"${sym}"`)
    this.i++
  }

  private name(what: string): string {
    const t = this.peek()
    if (t === undefined || t.t !== 'word') this.fail(what)
    this.i++
    return t.v
  }

  private int(what: string): number {
    const t = this.peek()
    if (t === undefined || t.t !== 'num' || !/^\d+$/.test(t.v)) this.fail(what)
    this.i++
    return Number(t.v)
  }

  query(): FactQuery {
    this.word('from')
    const q: FactQuery = { collection: this.name('a collection name'), verb: { verb: 'aggregate', measure: { fn: 'count' } } }
    for (;;) {
      if (this.isWord('where')) {
        this.i++
        q.where = this.cond()
      } else if (this.isWord('as') && this.isWord('of', 1)) {
        this.i += 2
        const t = this.peek()
        if (t === undefined || (t.t !== 'date' && t.t !== 'datetime')) this.fail('a date or datetime after "as of"')
        this.i++
        q.asOf = t.v
      } else if (this.isWord('status')) {
        this.i++
        const s = this.name(`a status (${FACT_STATUSES.join(', ')}) or "any"`).toLowerCase()
        if (s !== 'any' && !(FACT_STATUSES as readonly string[]).includes(s)) this.fail(`a status (${FACT_STATUSES.join(', ')}) or "any"`)
        q.status = s as FactStatus | 'any'
      } else break
    }
    q.verb = this.verb()
    if (this.peek() !== undefined) this.fail('the end of the query')
    return q
  }

  private verb(): Verb {
    const t = this.peek()
    const w = t?.t === 'word' ? t.v.toLowerCase() : ''
    if (w === 'count') {
      this.i++
      return { verb: 'aggregate', measure: { fn: 'count' } }
    }
    if ((AGGREGATES as readonly string[]).includes(w)) return { verb: 'aggregate', measure: this.measure() }
    if (w === 'list') {
      this.i++
      const fields: string[] = []
      if (this.peek()?.t === 'word' && !this.isWord('order') && !this.isWord('limit')) {
        fields.push(this.name('a field'))
        while (this.isSym(',')) {
          this.i++
          fields.push(this.name('a field'))
        }
      }
      const v: Verb & { verb: 'list' } = { verb: 'list', fields }
      if (this.isWord('order')) {
        this.i++
        this.word('by')
        const field = this.name('a field to order by')
        let dir: 'asc' | 'desc' = 'asc'
        if (this.isWord('asc') || this.isWord('desc')) dir = this.name('asc or desc').toLowerCase() as 'asc' | 'desc'
        v.order = { field, dir }
      }
      if (this.isWord('limit')) {
        this.i++
        v.limit = this.int('a whole number after "limit"')
      }
      return v
    }
    if (w === 'argmax' || w === 'argmin') {
      this.i++
      const field = this.name('a field')
      const v: Verb & { verb: 'argmax' | 'argmin' } = { verb: w, field, ties: { rule: 'all' } }
      if (this.isWord('return')) {
        this.i++
        v.return = this.name('a field to return')
      }
      if (this.isWord('ties')) {
        this.i++
        v.ties = this.tie()
      }
      return v
    }
    if (w === 'group') {
      this.i++
      this.word('by')
      const key = this.groupKey()
      let measure: Measure = { fn: 'count' }
      if (this.isWord('count') || (AGGREGATES as readonly string[]).includes(this.peek()?.v.toLowerCase() ?? '')) measure = this.measure()
      if (this.isWord('top')) {
        this.i++
        const top = this.int('a whole number after "top"')
        let ties: Tie = { rule: 'all' }
        if (this.isWord('ties')) {
          this.i++
          ties = this.tie()
        }
        return { verb: 'group', key, measure, pick: { top, ties } }
      }
      if (this.isWord('share')) {
        this.i++
        const op = this.isSym('>=') ? '>=' : this.isSym('>') ? '>' : this.fail('">=" or ">" after "share"')
        this.i++
        const n = this.peek()
        if (n === undefined || n.t !== 'num') this.fail('a percentage')
        this.i++
        this.sym('%')
        return { verb: 'group', key, measure, pick: { share: { op, percent: Number(n.v) } } }
      }
      if (this.isWord('all')) this.i++
      return { verb: 'group', key, measure, pick: { all: true } }
    }
    if (w === 'compare') {
      this.i++
      const measure = this.measure()
      this.word('over')
      const over = this.name('the field the periods are of')
      const a = this.period()
      this.word('vs')
      const b = this.period()
      return { verb: 'compare', measure, over, a, b }
    }
    return this.fail('a verb (count, sum, avg, min, max, distinct, list, argmax, argmin, group by, compare)')
  }

  private measure(): Measure {
    const fn = this.name('count, sum, avg, min, max or distinct').toLowerCase()
    if (fn === 'count') return { fn: 'count' }
    if (!(AGGREGATES as readonly string[]).includes(fn)) {
      this.i--
      this.fail('count, sum, avg, min, max or distinct')
    }
    const paren = this.isSym('(')
    if (paren) this.i++
    const field = this.name(`a field after "${fn}"`)
    if (paren) this.sym(')')
    return { fn: fn as Aggregate, field }
  }

  private groupKey(): GroupKey {
    const t = this.peek()
    if (t?.t === 'word' && (BUCKET_UNITS as readonly string[]).includes(t.v.toLowerCase()) && this.toks[this.i + 1]?.v === '(') {
      this.i += 2
      const field = this.name('a date field')
      this.sym(')')
      return { field, bucket: t.v.toLowerCase() as BucketUnit }
    }
    return { field: this.name('a field to group by') }
  }

  private tie(): Tie {
    const rule = this.name('a tie rule (all, first, earliest FIELD, latest FIELD)').toLowerCase()
    if (rule === 'all' || rule === 'first') return { rule }
    if (rule === 'earliest' || rule === 'latest') return { rule, field: this.name(`a field after "${rule}"`) }
    this.i--
    return this.fail('a tie rule (all, first, earliest FIELD, latest FIELD)')
  }

  private unit(): BucketUnit {
    const unit = this.name('a unit (day, week, month, quarter, half, year)').toLowerCase()
    if (!(BUCKET_UNITS as readonly string[]).includes(unit)) {
      this.i--
      this.fail('a unit (day, week, month, quarter, half, year)')
    }
    return unit as BucketUnit
  }

  private period(): Period {
    const t = this.peek()
    if (t === undefined) return this.fail(PERIODS)
    const word = t.t === 'word' ? t.v.toLowerCase() : undefined
    if (word === 'this' || word === 'previous') {
      this.i++
      return { calendar: word, unit: this.unit() }
    }
    if (word === 'past') {
      this.i++
      const n = this.peek()
      if (n === undefined || n.t !== 'num' || !/^\d+$/.test(n.v) || Number(n.v) < 1 || Number(n.v) > MAX_PAST_DAYS)
        return this.fail(`a number of days (1–${MAX_PAST_DAYS}) after "past"`)
      this.i++
      const unit = this.name('"days" after "past N"').toLowerCase()
      if (unit !== 'days' && unit !== 'day') {
        this.i--
        this.fail('"days" after "past N"')
      }
      return { past: Number(n.v), unit: 'day' }
    }
    if (word === 'first' || word === 'last') {
      this.i++
      return { relative: word, unit: this.unit() }
    }
    const p = periodOf(t)
    if (p === undefined) return this.fail(PERIODS)
    this.i++
    if (t.t === 'date' && this.isSym('..')) {
      this.i++
      const end = this.peek()
      if (end === undefined || end.t !== 'date' || !isDate(end.v)) this.fail('a date after ".."')
      this.i++
      if (end.v < t.v) throw invalidInput('query', `query: the period ${t.v}..${end.v} ends before it starts`)
      return { from: t.v, to: end.v, label: `${t.v}..${end.v}` }
    }
    return p
  }

  private cond(): Cond {
    const parts = [this.conj()]
    while (this.isWord('or')) {
      this.i++
      parts.push(this.conj())
    }
    return parts.length === 1 ? parts[0]! : { or: parts }
  }

  private conj(): Cond {
    const parts = [this.unary()]
    while (this.isWord('and')) {
      this.i++
      parts.push(this.unary())
    }
    return parts.length === 1 ? parts[0]! : { and: parts }
  }

  private unary(): Cond {
    if (this.isWord('not')) {
      this.i++
      return { not: this.unary() }
    }
    if (this.isSym('(')) {
      this.i++
      const c = this.cond()
      this.sym(')')
      return c
    }
    return this.pred()
  }

  private pred(): Cond {
    const field = this.name('a field')
    const t = this.peek()
    if (t?.t === 'sym' && ['=', '!=', '<>', '<', '<=', '>', '>='].includes(t.v)) {
      this.i++
      return { field, op: (t.v === '<>' ? '!=' : t.v) as Comparison, value: this.literal() }
    }
    const w = t?.t === 'word' ? t.v.toLowerCase() : ''
    if (w === 'between') {
      this.i++
      const low = this.literal()
      this.word('and')
      return { field, op: 'between', low, high: this.literal() }
    }
    if (w === 'in') {
      this.i++
      if (this.isSym('(')) {
        this.i++
        const values = [this.literal()]
        while (this.isSym(',')) {
          this.i++
          values.push(this.literal())
        }
        this.sym(')')
        return { field, op: 'in', values }
      }
      return { field, op: 'within', period: this.period() }
    }
    if (w === 'has') {
      this.i++
      return { field, op: 'has', value: this.literal() }
    }
    if (w === 'contains') {
      this.i++
      const s = this.peek()
      if (s === undefined || s.t !== 'str') this.fail('a quoted text after "contains"')
      this.i++
      return { field, op: 'contains', value: s.v }
    }
    if (w === 'is') {
      this.i++
      const negated = this.isWord('not')
      if (negated) this.i++
      this.word('null')
      return { field, op: negated ? 'not-null' : 'null' }
    }
    return this.fail(`a comparison after ${field} (=, !=, <, <=, >, >=, between, in, has, contains, is null)`)
  }

  private literal(): Literal {
    const t = this.peek()
    if (t === undefined) return this.fail('a value')
    this.i++
    switch (t.t) {
      case 'str':
        return { kind: 'string', value: t.v }
      case 'num':
        return { kind: 'number', value: Number(t.v) }
      case 'date':
        if (!isDate(t.v)) throw invalidInput('query', `query: ${t.v} is not a calendar date`)
        return { kind: 'date', value: t.v }
      case 'datetime':
        return {
          kind: 'datetime',
          value: new Date(Date.parse(t.v.length === 16 ? `${t.v}Z` : /Z|[+-]\d{2}:\d{2}$/.test(t.v) ? t.v : `${t.v}Z`)).toISOString(),
        }
      case 'time':
        return { kind: 'time', value: t.v }
      case 'word':
        if (t.v.toLowerCase() === 'true' || t.v.toLowerCase() === 'false') return { kind: 'boolean', value: t.v.toLowerCase() === 'true' }
        break
      default:
        break
    }
    this.i--
    return this.fail('a value (a quoted text, a number, a date, a time HH:MM, true or false)')
  }
}

/** The inclusive day range a period token names (a year number, 2024-Q4, 2024-H1, 2024-03, a date), or undefined. */
function periodOf(t: Tok): DayRange | undefined {
  if (t.t === 'num' && /^\d{4}$/.test(t.v)) return { from: `${t.v}-01-01`, to: `${t.v}-12-31`, label: t.v }
  if (t.t === 'quarter') {
    const y = t.v.slice(0, 4)
    const q = Number(t.v.slice(6))
    return { from: `${y}-${pad(q * 3 - 2)}-01`, to: lastDay(Number(y), q * 3), label: t.v }
  }
  if (t.t === 'half') {
    const y = t.v.slice(0, 4)
    const h = Number(t.v.slice(6))
    return { from: `${y}-${h === 1 ? '01' : '07'}-01`, to: lastDay(Number(y), h * 6), label: t.v }
  }
  if (t.t === 'month') {
    const y = Number(t.v.slice(0, 4))
    const m = Number(t.v.slice(5))
    if (m < 1 || m > 12) return undefined
    return { from: `${t.v}-01`, to: lastDay(y, m), label: t.v }
  }
  if (t.t === 'date' && isDate(t.v)) return { from: t.v, to: t.v, label: t.v }
  return undefined
}

function pad(n: number): string {
  return String(n).padStart(2, '0')
}

/** `YYYY-MM-DD` of the last day of a month (1–12). */
function lastDay(year: number, month: number): string {
  const d = new Date(Date.UTC(year, month, 0))
  return d.toISOString().slice(0, 10)
}

/** The day after an ISO date (`2024-12-31` → `2025-01-01`): the exclusive end of an inclusive range. */
export function nextDay(date: string): string {
  const d = new Date(`${date}T00:00:00Z`)
  d.setUTCDate(d.getUTCDate() + 1)
  return d.toISOString().slice(0, 10)
}

/** The period of a bucket label (`2024`, `2024-Q4`, `2024-H1`, `2024-03`, `2024-03-05`, `2024-W05`). */
export function bucketPeriod(label: string, unit: BucketUnit): DayRange {
  if (unit === 'week') {
    const m = /^(\d{4})-W(\d{2})$/.exec(label)
    if (m) {
      // ISO 8601 week: week 1 holds the year's first Thursday; weeks start on Monday.
      const jan4 = new Date(Date.UTC(Number(m[1]), 0, 4))
      const monday = new Date(jan4.getTime() - ((jan4.getUTCDay() + 6) % 7) * 86_400_000 + (Number(m[2]) - 1) * 7 * 86_400_000)
      const from = monday.toISOString().slice(0, 10)
      return { from, to: new Date(monday.getTime() + 6 * 86_400_000).toISOString().slice(0, 10), label }
    }
  }
  const kind: Tok['t'] =
    unit === 'year' ? 'num' : unit === 'quarter' ? 'quarter' : unit === 'half' ? 'half' : unit === 'month' ? 'month' : 'date'
  const p = periodOf({ t: kind, v: label, at: 0 })
  if (p === undefined) throw invalidInput('query', `query: ${label} is not a ${unit}`)
  return p
}
