/**
 * The typed fact ledger's domain types (docs/FACTS.md): collections with typed fields, records with
 * status, provenance and bitemporal history, and the operations logged as events. Pure: no I/O.
 */

/** Scalar field types. Dates are ISO `YYYY-MM-DD`, datetimes ISO-8601 in UTC (`…Z`), times of day `HH:MM` (or `HH:MM:SS`). */
export const SCALAR_TYPES = ['string', 'integer', 'number', 'money', 'boolean', 'date', 'datetime', 'time', 'enum', 'reference'] as const
export type ScalarType = (typeof SCALAR_TYPES)[number]
/** Every field type: a scalar, or a list of one. */
export type FieldType = ScalarType | 'list'
export const FIELD_TYPES: readonly FieldType[] = [...SCALAR_TYPES, 'list']

/** One field of a collection. */
export interface FieldSpec {
  name: string
  type: FieldType
  description?: string
  /** For `money` (and a list of money): ISO 4217 code. Default `USD`. */
  currency?: string
  /** For `enum` (and a list of enum): the allowed values. */
  values?: string[]
  /** For `list`: the element type (a scalar). */
  items?: ScalarType
  /** For `reference` (and a list of references): the collection its values name records of (by record id). */
  collection?: string
  /** Other words for this field ("spent", "price" → `cost_usd`), which a query may use instead of its name. */
  synonyms?: string[]
}

/** A collection as declared or inferred: its fields, identity key and main time field. */
export interface CollectionSpec {
  name: string
  description?: string
  fields: FieldSpec[]
  /** Field names whose values identify a record (trip = destination + date): a second record with the same values updates the first. Empty: every record is new. */
  identity: string[]
  /** The main time field (a `date` or `datetime` field): what coverage date ranges and `as of` talk about. */
  timeField?: string
}

/** Record status: aggregates count `done` records unless the query names a status. */
export const FACT_STATUSES = ['done', 'planned', 'cancelled', 'hypothetical'] as const
export type FactStatus = (typeof FACT_STATUSES)[number]

/** Where a record came from: a person (`user`), the agent, an import, extraction from an observation, or the event log (activity). */
export interface FactProvenance {
  source: 'user' | 'agent' | 'import' | 'extraction' | 'activity'
  observation?: string
  session?: string
  quote?: string
  /** The imported file and its 1-based line or row. */
  file?: string
  line?: number
  /** For `extraction`: the model that proposed the record (an LLM's model name). */
  model?: string
}

/** A field value as stored (JSON): scalars, lists of scalars, or null for absent. */
export type FactValue = string | number | boolean | null | (string | number | boolean)[]

/** A record's field values by field name. */
export type FactValues = Record<string, FactValue>

/** One operation of the fact ledger, as the payload of a logged event (`mnemo` format, type `fact`). */
export type FactOp =
  | { op: 'fact'; action: 'declare'; collection: CollectionSpec }
  | {
      op: 'fact'
      action: 'assert'
      collection: string
      id: string
      values: FactValues
      /** The record's identity key values (see `identityOf`), when its collection has an identity. */
      identity?: string
      status: FactStatus
      /** World time the fact holds from / until, epoch ms (optional). */
      validFrom?: number
      validTo?: number
      provenance: FactProvenance
    }
  /** The fact stopped holding at `at` (world time, epoch ms): its history stays. */
  | { op: 'fact'; action: 'retract'; collection: string; id: string; at: number }
  /** Forget the record for real: its values leave every view and export; a tombstone keeps its id and when. */
  | { op: 'fact'; action: 'delete'; collection: string; id: string; identity?: string }

/** A record as read back: its current version. */
export interface FactRecord {
  id: string
  collection: string
  values: FactValues
  status: FactStatus
  /** World time, epoch ms. */
  validFrom?: number
  validTo?: number
  /** Record time of this version (when mnemo learnt it), epoch ms. */
  recordedAt: number
  /** 1 for the first version. */
  version: number
  provenance: FactProvenance
  /** Its identity key's values (see `identityOf`), when its collection has an identity. */
  identity?: string
  user?: string
}

/** One version of a record's history (oldest first). */
export interface FactVersion extends FactRecord {
  action: 'assert' | 'retract'
  /** Record time this version stopped being the latest, epoch ms; absent for the latest. */
  supersededAt?: number
}

/** A collection with what a query writer needs: the spec, how many records it holds, and example values per field. */
export interface CollectionInfo extends CollectionSpec {
  records: number
  examples: Record<string, FactValue[]>
  /** The range of the time field over its records (ISO), when it has one and records. */
  from?: string
  to?: string
}
