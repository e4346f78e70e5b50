import { invalidInput, MnemoError } from '../errors.js'
import { stableStringify } from '../hash.js'
import {
  FIELD_TYPES,
  SCALAR_TYPES,
  type CollectionSpec,
  type FactValue,
  type FactValues,
  type FieldSpec,
  type ScalarType,
} from './fact-types.js'

// Checking, coercing and inferring typed field values (docs/FACTS.md "Collections and records").

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/
const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/
const DATETIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?$/
const TIME = /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/
/** Field names a record may not use: they name the record's own columns in queries. */
const RESERVED_FIELDS: readonly string[] = ['id', 'status', 'recorded_at', 'valid_from', 'valid_to', 'version']
/** Most fields a collection may have. */
const MAX_FIELDS = 64
/** Longest string value, characters. */
const MAX_STRING_CHARS = 4000

/** A name fit for a collection or field: a letter or `_`, then letters, digits, `_`; 1–64 characters. */
export function checkName(value: unknown, path: string): string {
  if (typeof value !== 'string' || !NAME.test(value)) {
    throw invalidInput(path, `${path} must be a name of letters, digits and _ starting with a letter (got ${JSON.stringify(value)})`)
  }
  return value
}

/** True for a real calendar date `YYYY-MM-DD`. */
export function isDate(value: string): boolean {
  if (!DATE.test(value)) return false
  const d = new Date(`${value}T00:00:00Z`)
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value
}

/**
 * Checks a declared collection spec (names, types, identity and time fields naming fields).
 * @throws {MnemoError} `INVALID_INPUT` naming the bad key path (`fields[2].type`).
 */
export function checkSpec(raw: unknown): CollectionSpec {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw invalidInput('collection', 'a collection spec must be an object { name, fields, identity?, timeField? }')
  const r = raw as Record<string, unknown>
  const name = checkName(r['name'], 'name')
  if (!Array.isArray(r['fields'])) throw invalidInput('fields', `collection ${name}: fields must be an array of { name, type }`)
  if (r['fields'].length > MAX_FIELDS)
    throw invalidInput('fields', `collection ${name}: at most ${MAX_FIELDS} fields (got ${r['fields'].length})`)
  const fields = r['fields'].map((f, i) => checkField(f, `fields[${i}]`))
  const names = new Set<string>()
  for (const f of fields) {
    if (names.has(f.name)) throw invalidInput('fields', `collection ${name}: field ${f.name} is declared twice`)
    names.add(f.name)
  }
  const identity = r['identity'] === undefined ? [] : r['identity']
  if (!Array.isArray(identity) || !identity.every((x) => typeof x === 'string' && names.has(x))) {
    throw invalidInput('identity', `collection ${name}: identity must list declared fields (got ${JSON.stringify(r['identity'])})`)
  }
  const timeField = r['timeField']
  if (timeField !== undefined) {
    const f = fields.find((x) => x.name === timeField)
    if (!f || (f.type !== 'date' && f.type !== 'datetime'))
      throw invalidInput('timeField', `collection ${name}: timeField must name a date or datetime field (got ${JSON.stringify(timeField)})`)
  }
  return {
    name,
    ...(typeof r['description'] === 'string' ? { description: r['description'] } : {}),
    fields,
    identity: identity as string[],
    ...(typeof timeField === 'string' ? { timeField } : {}),
  }
}

function checkField(raw: unknown, path: string): FieldSpec {
  if (raw === null || typeof raw !== 'object') throw invalidInput(path, `${path} must be an object { name, type }`)
  const r = raw as Record<string, unknown>
  const name = checkName(r['name'], `${path}.name`)
  if (RESERVED_FIELDS.includes(name))
    throw invalidInput(
      `${path}.name`,
      `${path}.name ${name} is reserved for the record's own column`,
      `rename it (for example ${name}_value)`,
    )
  if (typeof r['type'] !== 'string' || !(FIELD_TYPES as readonly string[]).includes(r['type'])) {
    throw invalidInput(`${path}.type`, `${path}.type must be one of ${FIELD_TYPES.join(', ')} (got ${JSON.stringify(r['type'])})`)
  }
  const type = r['type'] as FieldSpec['type']
  const spec: FieldSpec = { name, type }
  if (typeof r['description'] === 'string') spec.description = r['description']
  if (type === 'list') {
    if (typeof r['items'] !== 'string' || !(SCALAR_TYPES as readonly string[]).includes(r['items'])) {
      throw invalidInput(`${path}.items`, `${path}.items must be one of ${SCALAR_TYPES.join(', ')} (got ${JSON.stringify(r['items'])})`)
    }
    spec.items = r['items'] as ScalarType
  }
  const base = type === 'list' ? spec.items : type
  if (base === 'enum') {
    if (!Array.isArray(r['values']) || r['values'].length === 0 || !r['values'].every((v) => typeof v === 'string')) {
      throw invalidInput(`${path}.values`, `${path}.values must list the enum's strings`)
    }
    spec.values = r['values'] as string[]
  }
  if (base === 'money') spec.currency = typeof r['currency'] === 'string' && /^[A-Z]{3}$/.test(r['currency']) ? r['currency'] : 'USD'
  if (base === 'reference') spec.collection = checkName(r['collection'], `${path}.collection`)
  if (Array.isArray(r['synonyms'])) spec.synonyms = r['synonyms'].filter((s): s is string => typeof s === 'string' && NAME.test(s))
  return spec
}

/**
 * The union of a stored spec and a newer one: new fields are added, a new identity or time field may be set where
 * there was none; a field whose type changes is refused.
 * @throws {MnemoError} `CONFLICT` — a field declared again with another type, or another identity key.
 */
export function mergeSpecs(old: CollectionSpec, next: CollectionSpec): CollectionSpec {
  const fields = [...old.fields]
  for (const f of next.fields) {
    const i = fields.findIndex((x) => x.name === f.name)
    const had = fields[i]
    if (had === undefined) {
      fields.push(f)
      continue
    }
    if (had.type !== f.type || had.items !== f.items) {
      throw new MnemoError(
        'CONFLICT',
        `collection ${old.name}: field ${f.name} is ${describeType(had)}, cannot become ${describeType(f)}`,
        { details: { kind: 'collection', id: `${old.name}.${f.name}` } },
      )
    }
    const values = had.values || f.values ? [...new Set([...(had.values ?? []), ...(f.values ?? [])])] : undefined
    const synonyms = had.synonyms || f.synonyms ? [...new Set([...(had.synonyms ?? []), ...(f.synonyms ?? [])])] : undefined
    fields[i] = { ...had, ...f, ...(values ? { values } : {}), ...(synonyms ? { synonyms } : {}) }
  }
  if (old.identity.length > 0 && next.identity.length > 0 && old.identity.join(',') !== next.identity.join(',')) {
    throw new MnemoError(
      'CONFLICT',
      `collection ${old.name}: its identity is (${old.identity.join(', ')}), cannot become (${next.identity.join(', ')})`,
      { details: { kind: 'collection', id: old.name } },
    )
  }
  const description = next.description ?? old.description
  const timeField = old.timeField ?? next.timeField
  return {
    name: old.name,
    ...(description !== undefined ? { description } : {}),
    fields,
    identity: old.identity.length > 0 ? old.identity : next.identity,
    ...(timeField !== undefined ? { timeField } : {}),
  }
}

/** `integer`, `list of date`, `enum (a, b)`, `money (USD)`: a field's type in words. */
export function describeType(f: FieldSpec): string {
  const base = f.type === 'list' ? (f.items ?? 'string') : f.type
  const extra =
    base === 'enum' && f.values
      ? ` (${f.values.join(', ')})`
      : base === 'money'
        ? ` (${f.currency ?? 'USD'})`
        : base === 'reference'
          ? ` (${f.collection})`
          : ''
  return f.type === 'list' ? `list of ${base}${extra}` : `${base}${extra}`
}

/**
 * A record's values checked against its collection: every value of its declared type (with `coerce`, text as a CSV
 * cell gives it: "12" for an integer, "true" for a boolean, "a;b" for a list), unknown fields refused.
 * Absent and empty values are `null`.
 *
 * @param where - How errors name the record (`record 3`, `trips line 7`).
 * @throws {MnemoError} `INVALID_INPUT` — path `<where>.<field>`: a value of the wrong type, or a field the collection does not have.
 */
export function checkValues(spec: CollectionSpec, raw: Record<string, unknown>, where: string, coerce = false): FactValues {
  const out: FactValues = {}
  for (const key of Object.keys(raw)) {
    if (!spec.fields.some((f) => f.name === key)) {
      throw invalidInput(
        `${where}.${key}`,
        `${where}: field ${key} is not a field of ${spec.name} (fields: ${spec.fields.map((f) => f.name).join(', ')})`,
      )
    }
  }
  for (const f of spec.fields) {
    const v = raw[f.name]
    out[f.name] = v === undefined || v === null || (coerce && v === '') ? null : checkValue(f, v, `${where}.${f.name}`, coerce)
  }
  return out
}

function checkValue(f: FieldSpec, v: unknown, path: string, coerce: boolean): FactValue {
  if (f.type === 'list') {
    let items = v
    if (coerce && typeof v === 'string')
      items = v.startsWith('[')
        ? safeJson(v)
        : v
            .split(/[;|]/)
            .map((x) => x.trim())
            .filter((x) => x.length > 0)
    if (!Array.isArray(items)) throw wrongType(f, v, path)
    return items.map((x, i) => checkScalar(f.items ?? 'string', f, x, `${path}[${i}]`, coerce))
  }
  return checkScalar(f.type, f, v, path, coerce)
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

function checkScalar(type: ScalarType, f: FieldSpec, v: unknown, path: string, coerce: boolean): string | number | boolean {
  const bad = (): MnemoError => wrongType(f, v, path)
  switch (type) {
    case 'integer': {
      const n = coerce && typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v
      if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw bad()
      return n
    }
    case 'number':
    case 'money': {
      const n =
        coerce && typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v.trim().replace(/^\$/, '')) ? Number(v.trim().replace(/^\$/, '')) : v
      if (typeof n !== 'number' || !Number.isFinite(n)) throw bad()
      return n
    }
    case 'boolean': {
      if (typeof v === 'boolean') return v
      if (coerce && typeof v === 'string' && /^(true|false|yes|no|1|0)$/i.test(v.trim())) return /^(true|yes|1)$/i.test(v.trim())
      throw bad()
    }
    case 'date': {
      if (typeof v !== 'string' || !isDate(v)) throw bad()
      return v
    }
    case 'datetime': {
      if (typeof v !== 'string' || !DATETIME.test(v) || Number.isNaN(Date.parse(v))) throw bad()
      return new Date(Date.parse(v)).toISOString()
    }
    case 'time': {
      if (typeof v !== 'string' || !TIME.test(v)) throw bad()
      return v
    }
    case 'enum': {
      if (typeof v !== 'string' || !(f.values ?? []).includes(v))
        throw invalidInput(path, `${path} must be one of ${(f.values ?? []).join(', ')} (got ${JSON.stringify(v)})`)
      return v
    }
    case 'reference':
    case 'string': {
      const s = typeof v === 'string' ? v : coerce && (typeof v === 'number' || typeof v === 'boolean') ? String(v) : undefined
      if (s === undefined) throw bad()
      if (s.length > MAX_STRING_CHARS) throw invalidInput(path, `${path} is ${s.length} characters, above the limit of ${MAX_STRING_CHARS}`)
      return s
    }
  }
}

function wrongType(f: FieldSpec, v: unknown, path: string): MnemoError {
  const shown = JSON.stringify(v)
  return invalidInput(
    path,
    `${path} must be ${describeType(f)} (got ${shown === undefined ? String(v) : shown.length > 60 ? `${shown.slice(0, 57)}...` : shown})`,
  )
}

/**
 * Field specs inferred from example records, in first-seen order: booleans, integers, numbers (`money` in USD when
 * the name says so: `_usd`, `cost`, `price`, `amount`), dates, datetimes, times of day, lists (of the element type
 * inferred the same way), otherwise strings. `coerce`: values are text (CSV cells) and are read as such.
 */
export function inferFields(records: readonly Record<string, unknown>[], coerce = false): FieldSpec[] {
  const names: string[] = []
  for (const r of records) for (const k of Object.keys(r)) if (!names.includes(k)) names.push(k)
  return names.map((name) => {
    const values = records.map((r) => r[name]).filter((v) => v !== undefined && v !== null && !(coerce && v === ''))
    if (values.length > 0 && values.every((v) => Array.isArray(v))) {
      const items = inferScalar(name, (values as unknown[][]).flat(), coerce)
      return { name, type: 'list', items, ...(items === 'money' ? { currency: 'USD' } : {}) } satisfies FieldSpec
    }
    if (coerce && values.length > 0 && values.every((v) => typeof v === 'string' && v.startsWith('[') && Array.isArray(safeJson(v)))) {
      const items = inferScalar(
        name,
        values.flatMap((v) => safeJson(v as string) as unknown[]),
        false,
      )
      return { name, type: 'list', items } satisfies FieldSpec
    }
    const type = inferScalar(name, values, coerce)
    return { name, type, ...(type === 'money' ? { currency: 'USD' } : {}) } satisfies FieldSpec
  })
}

function inferScalar(name: string, values: readonly unknown[], coerce: boolean): ScalarType {
  if (values.length === 0) return 'string'
  const all = (test: (v: unknown) => boolean): boolean => values.every(test)
  const text = (v: unknown): string | undefined => (typeof v === 'string' ? v.trim() : undefined)
  if (all((v) => typeof v === 'boolean' || (coerce && /^(true|false)$/i.test(text(v) ?? '')))) return 'boolean'
  const num = (v: unknown): number | undefined =>
    typeof v === 'number' ? v : coerce && /^-?\d+(\.\d+)?$/.test(text(v) ?? '') ? Number(text(v)) : undefined
  if (all((v) => num(v) !== undefined)) {
    if (/(_usd|_eur|_gbp|cost|price|amount|spent)/i.test(name)) return 'money'
    return all((v) => Number.isSafeInteger(num(v))) ? 'integer' : 'number'
  }
  if (all((v) => typeof v === 'string' && isDate(v))) return 'date'
  if (all((v) => typeof v === 'string' && DATETIME.test(v) && !Number.isNaN(Date.parse(v)))) return 'datetime'
  if (all((v) => typeof v === 'string' && TIME.test(v))) return 'time'
  return 'string'
}

/**
 * A spec inferred from a collection's first records: the fields (`inferFields`), the identity (`external_id`, the
 * records' own `id` key renamed by `renameExternalId`, when they have one; else none), and the main time field
 * (`date`, else the first date or datetime field).
 */
export function inferSpec(name: string, records: readonly Record<string, unknown>[], coerce = false): CollectionSpec {
  const fields = inferFields(records, coerce)
  const time =
    fields.find((f) => f.name === 'date' && (f.type === 'date' || f.type === 'datetime')) ??
    fields.find((f) => f.type === 'date' || f.type === 'datetime')
  const identity = fields.some((f) => f.name === EXTERNAL_ID) ? [EXTERNAL_ID] : []
  return { name, fields, identity, ...(time ? { timeField: time.name } : {}) }
}

/** The field an input record's own `id` key is kept in (`id` names mnemo's record id in queries). */
const EXTERNAL_ID = 'external_id'

/** An input record with its own `id` key renamed to `external_id` (see `EXTERNAL_ID`). */
export function renameExternalId(raw: Record<string, unknown>): Record<string, unknown> {
  if (!('id' in raw)) return raw
  const { id, ...rest } = raw
  return { [EXTERNAL_ID]: id, ...rest }
}

/** The identity of a record in its collection (its identity fields' values), or undefined when the collection has none. */
export function identityOf(spec: CollectionSpec, values: FactValues): string | undefined {
  if (spec.identity.length === 0) return undefined
  return stableStringify(spec.identity.map((k) => values[k] ?? null))
}
