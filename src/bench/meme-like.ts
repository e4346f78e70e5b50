import type { FactDependencies, StateAnswer } from '../engine/fact-dependencies.js'
import type { EngineFacts } from '../engine/facts.js'
import { mulberry32 } from '../core/random.js'

/**
 * A MEME-like generator of dependent-fact episodes and a deterministic scorer (MEME: Jung et al., arXiv:2605.12477;
 * episode shape from `../shared/datasets/meme/README.md`). Our own pools of entities, rules and phrasings; an episode
 * is a sequence of structured operations (state a value, state a rule, forget a key) with probes before and after
 * the root's change, each with its gold answer, for the six tasks: exact recall (ER), aggregation (Agg), tracking
 * (Tr), deletion (Del), cascade (Cas: a dependant with a declared new value) and absence (Abs: a dependant that
 * becomes unknown). Operations are structured, not conversation: this measures the ledger's propagation and
 * rendering, not extraction from text.
 */

type MemeTask = 'ER' | 'Agg' | 'Tr' | 'Del' | 'Cas' | 'Abs'

type MemeOp =
  | { op: 'set'; key: string; value: string; quote: string }
  | { op: 'rule'; source: string; target: string; effect: 'set' | 'uncertain'; value?: string; quote: string }
  | { op: 'forget'; key: string; quote: string }
  | { op: 'probe'; phase: 'before' | 'after' }

interface MemeProbe {
  phase: 'before' | 'after'
  task: MemeTask
  keys: string[]
  /** The value(s) the answer must give; for Abs after the change, the last known value; for Del after, none. */
  gold: string | string[] | null
  /** Gold status of the answer: `uncertain` (Abs after), `deleted` (Del after), else known. */
  expect: 'known' | 'uncertain' | 'deleted'
}

export interface MemeEpisode {
  id: string
  root: string
  hasTwoHop: boolean
  ops: MemeOp[]
  probes: MemeProbe[]
}

const FIRST = [
  'Seokjin',
  'Jihoon',
  'Mina',
  'Daniel',
  'Priya',
  'Tomás',
  'Aiko',
  'Lena',
  'Omar',
  'Grace',
  'Ravi',
  'Sofia',
  'Kenji',
  'Ines',
  'Marek',
  'Yara',
]
const LAST = [
  'Kang',
  'Ryu',
  'Park',
  'Okafor',
  'Nair',
  'Silva',
  'Tanaka',
  'Novak',
  'Haddad',
  'Lee',
  'Iyer',
  'Rossi',
  'Mori',
  'Costa',
  'Kowalski',
  'Aziz',
]
const ROOTS = ['team_lead', 'engineering_manager', 'product_owner', 'landlord', 'family_doctor', 'project_sponsor']
const DEPENDANTS = [
  'weekly_report_recipient',
  'code_reviewer',
  'deploy_approver',
  'oncall_primary',
  'budget_owner',
  'standup_host',
  'design_reviewer',
  'release_captain',
  'hiring_panel_lead',
  'security_contact',
]
const TOOLS = ['Karnex Pack', 'Dranith Stack', 'Synthari Modules', 'Velora Build', 'Quenta Deps', 'Ostrel Bundle']
const TOPICS = [
  {
    topic: 'oncall',
    keys: ['oncall_rotation', 'oncall_alert_channel', 'oncall_runbook_url'],
    values: ['paired oncall (primary + secondary)', '#aurora-pager', 'wiki.aurora.dev/incident-response'],
  },
  {
    topic: 'release',
    keys: ['release_cadence', 'release_channel', 'release_checklist_url'],
    values: ['every second Tuesday', '#ship-it', 'wiki.aurora.dev/release'],
  },
]
const SET_PHRASES = ['{key} is {value}.', 'Our {key} is {value}.', 'Update: the {key} is now {value}.']

/**
 * Generates `count` episodes from `seed` (the same seed, the same episodes). Each has a root that changes once, two
 * dependants with a declared new value (cascade), two that become unknown (absence), a second-hop dependant in about
 * half, a tracked key with three values, a deleted key, an aggregation topic of three keys, an exact-recall text and
 * two distractor keys (one with a rule from a key that never changes).
 */
export function generateMemeEpisodes(count: number, seed = 33): MemeEpisode[] {
  const r = mulberry32(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const person = (): string => `${pick(FIRST)} ${pick(LAST)}`
  const distinctPeople = (n: number): string[] => {
    const out = new Set<string>()
    while (out.size < n) out.add(person())
    return [...out]
  }
  const say = (key: string, value: string): string => pick(SET_PHRASES).replace('{key}', key.replace(/_/g, ' ')).replace('{value}', value)
  return Array.from({ length: count }, (_, e) => {
    const root = pick(ROOTS)
    const deps = [...DEPENDANTS].sort(() => r() - 0.5).slice(0, 7)
    const [cas1, cas2, abs1, abs2, hop2, d1, d2] = deps as [string, string, string, string, string, string, string]
    const people = distinctPeople(14)
    const [r0, r1, c1a, c1b, c2a, c2b, a1, a2, h0, hb, x1, x2] = people as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ]
    const hasTwoHop = r() < 0.5
    const hopSet = r() < 0.5
    const tools = [...TOOLS].sort(() => r() - 0.5).slice(0, 3)
    const topic = pick(TOPICS)
    const deleted = `log_drain_endpoint`
    const drain = `stream.${pick(['velturis', 'orbanet', 'quill'])}.io/${pick(['aurora', 'vega', 'lyra'])}`
    const exact = `ConnectionRefusedError: [Errno 111] Connection refused.\nService ${pick(['crysthene', 'marrow', 'tessel'])}-db-primary on port ${5000 + Math.floor(r() * 999)} is not accepting connections.`
    const ops: MemeOp[] = [
      { op: 'set', key: topic.keys[0]!, value: topic.values[0]!, quote: say(topic.keys[0]!, topic.values[0]!) },
      { op: 'set', key: 'package_manager', value: tools[0]!, quote: say('package_manager', tools[0]!) },
      { op: 'set', key: d1, value: x1, quote: say(d1, x1) },
      { op: 'set', key: topic.keys[1]!, value: topic.values[1]!, quote: say(topic.keys[1]!, topic.values[1]!) },
      { op: 'set', key: 'package_manager', value: tools[1]!, quote: say('package_manager', tools[1]!) },
      { op: 'set', key: deleted, value: drain, quote: `Logs drain to ${drain}.` },
      { op: 'set', key: topic.keys[2]!, value: topic.values[2]!, quote: say(topic.keys[2]!, topic.values[2]!) },
      { op: 'set', key: 'package_manager', value: tools[2]!, quote: say('package_manager', tools[2]!) },
      { op: 'set', key: root, value: r0, quote: say(root, r0) },
      { op: 'set', key: cas1, value: c1a, quote: `${cas1} is ${c1a}, ${r0} assigned it.` },
      { op: 'rule', source: root, target: cas1, effect: 'set', value: c1b, quote: `If the ${root} changes, the ${cas1} will be ${c1b}.` },
      { op: 'set', key: cas2, value: c2a, quote: `${cas2} is ${c2a}.` },
      { op: 'rule', source: root, target: cas2, effect: 'set', value: c2b, quote: `With a new ${root}, ${cas2} becomes ${c2b}.` },
      { op: 'set', key: abs1, value: a1, quote: `${abs1} is ${a1}, ${r0} assigned it; if the ${root} changes, this would change.` },
      { op: 'rule', source: root, target: abs1, effect: 'uncertain', quote: `if the ${root} changes, ${abs1} would change` },
      { op: 'set', key: abs2, value: a2, quote: `${abs2} is ${a2} for as long as ${r0} leads.` },
      { op: 'rule', source: root, target: abs2, effect: 'uncertain', quote: `${abs2} depends on the ${root}` },
      { op: 'set', key: d2, value: x2, quote: say(d2, x2) },
      { op: 'rule', source: d1, target: d2, effect: 'uncertain', quote: `${d2} depends on ${d1}` },
      { op: 'set', key: 'error_log', value: exact, quote: `Remember this error log word for word: ${exact}` },
    ]
    const probes: MemeProbe[] = [
      { phase: 'before', task: 'Cas', keys: [cas1], gold: c1a, expect: 'known' },
      { phase: 'before', task: 'Abs', keys: [abs1], gold: a1, expect: 'known' },
      { phase: 'before', task: 'Del', keys: [deleted], gold: drain, expect: 'known' },
      { phase: 'before', task: 'ER', keys: ['error_log'], gold: exact, expect: 'known' },
      { phase: 'after', task: 'Tr', keys: ['package_manager'], gold: tools, expect: 'known' },
      { phase: 'after', task: 'Cas', keys: [cas1], gold: c1b, expect: 'known' },
      { phase: 'after', task: 'Cas', keys: [cas2], gold: c2b, expect: 'known' },
      { phase: 'after', task: 'Abs', keys: [abs1], gold: a1, expect: 'uncertain' },
      { phase: 'after', task: 'Abs', keys: [abs2], gold: a2, expect: 'uncertain' },
      { phase: 'after', task: 'Abs', keys: [d2], gold: x2, expect: 'known' },
      { phase: 'after', task: 'Del', keys: [deleted], gold: null, expect: 'deleted' },
      { phase: 'after', task: 'Agg', keys: topic.keys, gold: topic.values, expect: 'known' },
      { phase: 'after', task: 'ER', keys: ['error_log'], gold: exact, expect: 'known' },
    ]
    if (hasTwoHop) {
      ops.push({ op: 'set', key: hop2, value: h0, quote: `${hop2} is ${h0}.` })
      ops.push(
        hopSet
          ? { op: 'rule', source: cas1, target: hop2, effect: 'set', value: hb, quote: `if the ${cas1} changes, ${hop2} will be ${hb}` }
          : { op: 'rule', source: cas1, target: hop2, effect: 'uncertain', quote: `${hop2} depends on the ${cas1}` },
      )
      probes.push(
        hopSet
          ? { phase: 'after', task: 'Cas', keys: [hop2], gold: hb, expect: 'known' }
          : { phase: 'after', task: 'Abs', keys: [hop2], gold: h0, expect: 'uncertain' },
      )
    }
    ops.push({ op: 'probe', phase: 'before' })
    ops.push({ op: 'set', key: root, value: r1, quote: `${r1} is our new ${root.replace(/_/g, ' ')}.` })
    ops.push({ op: 'forget', key: deleted, quote: `The ${deleted.replace(/_/g, ' ')} is ${drain}. Please delete that from your memory.` })
    ops.push({ op: 'probe', phase: 'after' })
    return { id: `gen_${String(e + 1).padStart(3, '0')}`, root, hasTwoHop, ops, probes }
  })
}

/** Whether an answer (or, for aggregation, the answers of its keys) scores against a probe. Deterministic. */
function scoreMemeProbe(p: MemeProbe, answers: StateAnswer[]): boolean {
  if (p.task === 'Tr') return JSON.stringify(answers[0]?.history) === JSON.stringify(p.gold)
  if (p.task === 'Agg')
    return answers.every((a, i) => a.status !== 'uncertain' && a.status !== 'deleted' && a.value === (p.gold as string[])[i])
  const a = answers[0]
  if (!a) return false
  if (p.expect === 'deleted') return a.status === 'deleted' && a.value === null && /forget/.test(a.text)
  if (p.expect === 'uncertain') return a.status === 'uncertain' && a.value === p.gold && a.text.startsWith('unknown now:')
  return (a.status === 'current' || a.status === 'changed') && a.value === p.gold
}

/** Runs an episode through the dependent-facts engine and scores each probe, in order. */
export async function runMemeEpisode(
  deps: FactDependencies,
  episode: MemeEpisode,
  advance: () => void,
): Promise<{ probe: MemeProbe; correct: boolean; answers: StateAnswer[] }[]> {
  const out: { probe: MemeProbe; correct: boolean; answers: StateAnswer[] }[] = []
  for (const op of episode.ops) {
    advance()
    if (op.op === 'set') await deps.set(op.key, op.value, { quote: op.quote })
    else if (op.op === 'rule')
      await deps.addRule({
        source: op.source,
        target: op.target,
        effect: op.effect,
        ...(op.value !== undefined ? { value: op.value } : {}),
        stated: op.quote,
      })
    else if (op.op === 'forget') await deps.forget(op.key)
    else {
      for (const probe of episode.probes.filter((p) => p.phase === op.phase)) {
        const answers: StateAnswer[] = []
        for (const k of probe.keys) answers.push(await deps.answer(k))
        out.push({ probe, correct: scoreMemeProbe(probe, answers), answers })
      }
    }
  }
  return out
}

/** Accuracy per task (and per phase for Del), over many episodes' scored probes. */
export function memeScores(
  results: readonly { probe: MemeProbe; correct: boolean }[],
): Record<string, { correct: number; total: number; accuracy: number }> {
  const out: Record<string, { correct: number; total: number; accuracy: number }> = {}
  for (const r of results) {
    const name =
      { ER: 'exact', Agg: 'aggregation', Tr: 'tracking', Del: 'deletion', Cas: 'cascade', Abs: 'absence' }[r.probe.task] +
      (r.probe.phase === 'before' ? ' (before)' : '')
    out[name] ??= { correct: 0, total: 0, accuracy: 0 }
    const s = out[name]
    s.total++
    if (r.correct) s.correct++
    s.accuracy = s.correct / s.total
  }
  return out
}

export type { EngineFacts }
