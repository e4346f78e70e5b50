/** How the Collections screen writes fact values, types and a record's changes: pure, so they are unit-tested in Node. */
import type { FactField, FactRecord, FactValue, FactVersion } from './types.js'

/** The collection of entity-attribute facts the dependency rules maintain (engine/fact-dependencies.ts). */
export const STATE_COLLECTION = 'entity_state'

/** A field's type in words: `integer`, `list of date`, `enum (a, b)`, `money (USD)`, `reference → trips`. */
export function fieldTypeText(f: FactField): string {
  const base = f.type === 'list' ? (f.items ?? 'string') : f.type
  const detail =
    base === 'enum' && f.values !== undefined
      ? ` (${f.values.join(', ')})`
      : base === 'money'
        ? ` (${f.currency ?? 'USD'})`
        : base === 'reference' && f.collection !== undefined
          ? ` → ${f.collection}`
          : ''
  return f.type === 'list' ? `list of ${base}${detail}` : `${base}${detail}`
}

/** A value as text: `—` for none, a list's items joined by `, `, money with its currency, text as written. */
export function factValueText(v: FactValue | undefined, field?: FactField): string {
  if (v === null || v === undefined) return '—'
  if (Array.isArray(v)) return v.length === 0 ? '(none)' : v.map((x) => factValueText(x, field)).join(', ')
  if (typeof v === 'number') {
    const text = v.toLocaleString('en-US', { maximumFractionDigits: 6 })
    const money = field !== undefined && (field.type === 'money' || (field.type === 'list' && field.items === 'money'))
    return money ? `${text} ${field.currency ?? 'USD'}` : text
  }
  return String(v)
}

/** Epoch ms as ISO-8601, or null. */
export function msIso(ms: number | undefined): string | null {
  return ms === undefined || !Number.isFinite(ms) ? null : new Date(ms).toISOString()
}

/** An entity-attribute fact that a change of what it depended on made unknown, waiting to be confirmed or re-resolved. */
export function isUncertain(r: Pick<FactRecord, 'collection' | 'values'>): boolean {
  return r.collection === STATE_COLLECTION && r.values['certainty'] === 'uncertain'
}

const same = (a: FactValue | undefined, b: FactValue | undefined): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null)

const day = (ms: number | undefined): string => (ms === undefined ? '—' : new Date(ms).toISOString().slice(0, 10))

/**
 * What a version changed from the one before it, one line each: `recorded` for the first; `retracted (stopped holding
 * on <day>)`; else `field: before → after` for each field whose value changed (in the fields' order, then any others),
 * the status and the valid-time bounds. `no change` when a version restated the same values.
 */
export function versionChanges(prev: FactVersion | undefined, v: FactVersion, fields: readonly FactField[] = []): string[] {
  if (prev === undefined) return [v.action === 'retract' ? 'retracted' : 'recorded']
  if (v.action === 'retract') return [`retracted (stopped holding on ${day(v.validTo)})`]
  const byName = new Map(fields.map((f) => [f.name, f]))
  const names = [...new Set([...fields.map((f) => f.name), ...Object.keys(prev.values), ...Object.keys(v.values)])]
  const out: string[] = []
  for (const name of names) {
    const a = prev.values[name]
    const b = v.values[name]
    if (!same(a, b)) out.push(`${name}: ${factValueText(a, byName.get(name))} → ${factValueText(b, byName.get(name))}`)
  }
  if (prev.status !== v.status) out.push(`status: ${prev.status} → ${v.status}`)
  if (prev.validFrom !== v.validFrom) out.push(`valid from: ${day(prev.validFrom)} → ${day(v.validFrom)}`)
  if (prev.validTo !== v.validTo) out.push(`valid to: ${day(prev.validTo)} → ${day(v.validTo)}`)
  if (prev.action === 'retract') out.unshift('asserted again')
  return out.length === 0 ? ['no change'] : out
}

/** Where a record came from, in words: `user`, `import (trips.csv line 4)`, `extraction`, `activity`, with a quote when kept. */
export function provenanceText(p: FactRecord['provenance']): string {
  const where = p.file !== undefined ? ` (${p.file}${p.line !== undefined ? ` line ${p.line}` : ''})` : ''
  const quote = p.quote !== undefined ? `: “${p.quote}”` : ''
  return `${p.source}${where}${quote}`
}
