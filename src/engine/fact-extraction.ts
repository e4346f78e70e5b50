import { MnemoError } from '../core/errors.js'
import { stableStringify } from '../core/hash.js'
import { makeId } from '../core/ids.js'
import { capText } from '../core/text.js'
import { isActivityCollection } from '../core/facts/activity.js'
import type { CollectionSpec, FactProvenance, FactStatus, FactValues } from '../core/facts/fact-types.js'
import { checkName, checkSpec, checkValues, identityOf, inferSpec, renameExternalId } from '../core/facts/fact-values.js'
import type { Observation, ProjectRef, Session } from '../core/types.js'
import type { LlmConsolidator } from '../lifecycle/llm-consolidator.js'
import type { FactExtraction, FactProposal } from '../lifecycle/llm-facts.js'
import { DEPENDENCY_COLLECTIONS } from './fact-dependencies.js'
import type { EngineFacts } from './facts.js'

/**
 * Writing what a model extracted from a session (lifecycle/llm-facts.ts) into the fact ledger: every proposal is
 * checked on its own, and only whole, checked records are written, each through `EngineFacts.add` (the path of
 * `mnemo facts add`) with provenance `extraction` (the observation, the session, the quote, the model). A refused
 * proposal is reported with its reason and writes nothing; the others are written.
 *
 * Refused: a proposal citing an observation that was not sent; a collection mnemo fills itself (the activity
 * collections, the dependent-fact ones); a value of the wrong type or a field the collection lacks (checked by
 * `checkValues` against the declared collection, or against the new collection inferred from its proposals, with
 * the identity the model gave it); a record without its identity values; two proposals with the same identity and
 * other values (an identity clash: both are refused, as nothing tells which is right).
 *
 * Run again on the same session (a resumed one is consolidated again), it writes nothing twice: a record without an
 * identity gets an id derived from its observation and values, and one with an identity is left alone when one of
 * its versions already came from the same observation (so a later correction by a person stands); a record deleted
 * at a person's request is never brought back.
 */

/** What writing one session's extraction did. */
interface ExtractedFactsReport {
  created: number
  updated: number
  /** Proposals equal to a stored record. */
  unchanged: number
  /** Proposals already written from the same observation before, or deleted at a person's request since. */
  skipped: number
  /** Why each refused proposal was refused: `<session id>: fact proposal <n> (<collection>): <reason>`. */
  rejected: string[]
}

/**
 * Asks the consolidator's model for the records one session's conversation states (shown the scope's writable
 * collections), then checks and writes them (see {@link writeExtractedFacts}). A model that fails
 * (`PROVIDER_FAILED`: network, HTTP, an answer that is not JSON of the schema even after one corrective retry, the
 * daily token budget) writes nothing and is reported in `error`.
 *
 * @param input.observations - The session's observations (only unflagged prompts and messages are sent).
 * @param input.today - Today in the user's time zone (ISO date), for the model's reading of relative dates.
 */
export async function extractSessionFacts(
  consolidator: LlmConsolidator,
  facts: EngineFacts,
  input: { project: ProjectRef; session: Session; observations: readonly Observation[]; today: string },
): Promise<ExtractedFactsReport & { error?: string }> {
  const collections = (await facts.schema({ project: input.project })).filter(
    (c) => !isActivityCollection(c.name) && !DEPENDENCY_COLLECTIONS.includes(c.name),
  )
  let extraction: FactExtraction
  try {
    extraction = await consolidator.extractFacts({ observations: input.observations, collections, today: input.today })
  } catch (error) {
    if (!MnemoError.is(error, 'PROVIDER_FAILED')) throw error
    return { created: 0, updated: 0, unchanged: 0, skipped: 0, rejected: [], error: error.message }
  }
  if (extraction.records.length === 0) return { created: 0, updated: 0, unchanged: 0, skipped: 0, rejected: [] }
  return writeExtractedFacts(facts, { ...input, extraction })
}

/** A proposal that passed every check, with what its write needs. */
interface Checked {
  n: number
  proposal: FactProposal
  observation: Observation
  spec: CollectionSpec
  values: FactValues
  identity: string | undefined
}

/**
 * Checks and writes one session's extraction into `facts` (an engine scoped to the session's user).
 *
 * @param input.observations - The session's observations the model was sent (citations are checked against them).
 * @returns Counts per outcome and the reasons of the refused proposals. Never throws for a bad proposal; throws only
 *   what the store throws.
 */
async function writeExtractedFacts(
  facts: EngineFacts,
  input: { project: ProjectRef; session: Session; observations: readonly Observation[]; extraction: FactExtraction },
): Promise<ExtractedFactsReport> {
  const { project, session, extraction } = input
  const where = { project }
  const report: ExtractedFactsReport = { created: 0, updated: 0, unchanged: 0, skipped: 0, rejected: [] }
  const reject = (n: number, p: FactProposal, why: string): void => {
    report.rejected.push(`${session.id}: fact proposal ${n} (${p.collection}): ${why}`)
  }
  const sent = new Map<string, Observation>(input.observations.map((o) => [o.id, o]))
  const known = new Map<string, CollectionSpec>()
  for (const c of await facts.schema(where)) if (!isActivityCollection(c.name)) known.set(c.name, c)

  // Each proposal on its own: it reads as one record, cites an observation sent, names a collection it may write.
  const pending: { n: number; proposal: FactProposal; observation: Observation }[] = []
  for (const [i, p] of extraction.records.entries()) {
    const n = i + 1
    if (p.problem !== undefined) {
      reject(n, p, p.problem)
      continue
    }
    const observation = p.observation === undefined ? undefined : sent.get(p.observation)
    if (observation === undefined) {
      reject(n, p, `it cites ${JSON.stringify(p.cited)}, which is not an observation of this session sent to the model`)
      continue
    }
    try {
      checkName(p.collection, 'collection')
    } catch (error) {
      if (!MnemoError.is(error)) throw error
      reject(n, p, error.message)
      continue
    }
    if (isActivityCollection(p.collection) || DEPENDENCY_COLLECTIONS.includes(p.collection)) {
      reject(n, p, `${p.collection} is filled by mnemo itself, never from conversation`)
      continue
    }
    // A record's own `id` is kept as `external_id`, as `facts add` keeps it.
    pending.push({ n, proposal: { ...p, values: renameExternalId(p.values) }, observation })
  }

  // A new collection: inferred from its proposals (as `facts add` infers one), with the identity the model named.
  const fresh = new Map<string, CollectionSpec>()
  for (const name of new Set(pending.map((x) => x.proposal.collection))) {
    if (known.has(name)) continue
    const mine = pending.filter((x) => x.proposal.collection === name)
    const named = extraction.collections.find((c) => c.name === name)
    const inferred = inferSpec(
      name,
      mine.map((x) => x.proposal.values),
    )
    const missing = (named?.identity ?? []).filter((k) => !inferred.fields.some((f) => f.name === k))
    if (missing.length > 0) {
      for (const x of mine)
        reject(x.n, x.proposal, `the new collection's identity names ${missing.join(', ')}, which none of its records gives`)
      continue
    }
    try {
      fresh.set(
        name,
        checkSpec({
          ...inferred,
          ...(named?.description ? { description: named.description } : {}),
          identity: named && named.identity.length > 0 ? [...new Set(named.identity)] : inferred.identity,
        }),
      )
    } catch (error) {
      if (!MnemoError.is(error)) throw error
      for (const x of mine) reject(x.n, x.proposal, `the new collection is not valid: ${error.message}`)
    }
  }

  // Values against the collection's schema, and identity values present.
  const checked: Checked[] = []
  for (const x of pending) {
    const spec = known.get(x.proposal.collection) ?? fresh.get(x.proposal.collection)
    if (spec === undefined) continue
    let values: FactValues
    try {
      values = checkValues(spec, x.proposal.values, `fact proposal ${x.n}`)
    } catch (error) {
      if (!MnemoError.is(error)) throw error
      reject(x.n, x.proposal, error.message)
      continue
    }
    const absent = spec.identity.filter((k) => values[k] === null)
    if (absent.length > 0) {
      reject(x.n, x.proposal, `it lacks the identity field${absent.length > 1 ? 's' : ''} ${absent.join(', ')} of ${spec.name}`)
      continue
    }
    checked.push({ ...x, spec, values, identity: identityOf(spec, values) })
  }

  // Within the batch: the same identity with other values is a clash (all refused); the same record twice is one.
  const shape = (c: Checked): string => `${c.proposal.status}\u0000${stableStringify(c.values)}`
  const byKey = new Map<string, Checked[]>()
  for (const c of checked) {
    const key = `${c.spec.name}\u0000${c.identity ?? `${c.observation.id}\u0000${shape(c)}`}`
    byKey.set(key, [...(byKey.get(key) ?? []), c])
  }
  const survivors: Checked[] = []
  for (const group of byKey.values()) {
    if (new Set(group.map(shape)).size > 1) {
      const ns = group.map((c) => c.n)
      for (const c of group)
        reject(
          c.n,
          c.proposal,
          `identity clash: proposals ${ns.join(', ')} give ${c.spec.name} (${c.spec.identity.join(', ')}) = ${c.identity} different values; none is written`,
        )
      continue
    }
    survivors.push(group[0]!)
    report.unchanged += group.length - 1
  }

  // Writes, each on its own, through the path of `facts add`.
  const declared = new Set(known.keys())
  for (const c of survivors.sort((a, b) => a.n - b.n)) {
    const name = c.spec.name
    let id: string | undefined
    if (c.identity !== undefined) {
      if (declared.has(name)) {
        if ((await facts.deletedByIdentity(name, c.values, where)) !== undefined) {
          report.skipped++
          continue
        }
        const stored = await facts.byIdentity(name, c.values, where)
        if (stored && (await fromObservation(facts, stored.id, c.observation.id, project))) {
          report.skipped++
          continue
        }
      }
    } else {
      id = makeId(
        'fct',
        c.observation.ts,
        `${project.root}\u0000${session.user ?? ''}\u0000${name}\u0000extraction\u0000${c.observation.id}\u0000${shape(c)}`,
      )
      if (await exists(facts, id, project)) {
        report.skipped++
        continue
      }
    }
    const provenance: FactProvenance = {
      source: 'extraction',
      observation: c.observation.id,
      session: session.id,
      quote: quoteOf(c.proposal.quote, c.observation.text),
      model: extraction.model,
    }
    try {
      if (!declared.has(name)) {
        await facts.declare(c.spec, where)
        declared.add(name)
      }
      const written = await facts.add(name, c.values, {
        project,
        status: c.proposal.status as FactStatus,
        provenance,
        labels: [`fact proposal ${c.n}`],
        ...(id !== undefined ? { ids: [id] } : {}),
      })
      const outcome = written.records[0]!.outcome
      report[outcome]++
    } catch (error) {
      if (!MnemoError.is(error)) throw error
      reject(c.n, c.proposal, error.message)
    }
  }
  return report
}

/** The model's quote when the observation holds it (spacing and case aside), else the observation's own opening words. */
function quoteOf(quote: string, text: string): string {
  const norm = (s: string): string => s.toLowerCase().replace(/\s+/g, ' ').trim()
  return quote.length > 0 && norm(text).includes(norm(quote)) ? quote : capText(text, 200)
}

/** True when a version of record `id` was written from observation `observation` by an extraction. */
async function fromObservation(facts: EngineFacts, id: string, observation: string, project: ProjectRef): Promise<boolean> {
  const shown = await facts.show(id, { project })
  return 'record' in shown && shown.history.some((v) => v.provenance.source === 'extraction' && v.provenance.observation === observation)
}

/** True when record `id` is stored or was deleted at a person's request. */
async function exists(facts: EngineFacts, id: string, project: ProjectRef): Promise<boolean> {
  try {
    await facts.show(id, { project })
    return true
  } catch (error) {
    if (MnemoError.is(error, 'NOT_FOUND')) return false
    throw error
  }
}
