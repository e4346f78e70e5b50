import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createTestEngine } from '../testing/test-mnemo.js'
import { generateMemeEpisodes, memeScores, runMemeEpisode, type MemeEpisode } from './meme-like.js'

const ROOT = path.resolve(import.meta.dirname, '../..')
const SAMPLE = [
  ...(process.env['MNEMO_SHARED_DIR'] ? [path.join(process.env['MNEMO_SHARED_DIR'], 'datasets/meme/sample_sw_033.json')] : []),
  path.resolve(ROOT, '../shared/datasets/meme/sample_sw_033.json'),
  path.resolve(ROOT, '../../shared/datasets/meme/sample_sw_033.json'),
].find((f) => existsSync(f))

function run(episode: MemeEpisode) {
  const { engine, clock } = createTestEngine()
  return runMemeEpisode(engine.facts.dependencies, episode, () => clock.advance(3_600_000))
}

describe('MEME-like dependent facts', () => {
  it('generates the same episodes from the same seed, of the MEME shape', () => {
    const [a] = generateMemeEpisodes(1, 7)
    expect(generateMemeEpisodes(1, 7)[0]).toEqual(a)
    expect(new Set(a!.probes.map((p) => p.task))).toEqual(new Set(['ER', 'Agg', 'Tr', 'Del', 'Cas', 'Abs']))
    expect(a!.probes.filter((p) => p.phase === 'before').map((p) => p.task)).toEqual(['Cas', 'Abs', 'Del', 'ER'])
  })

  it('scores cascade and absence at least 0.9 over 40 episodes, with exact, aggregation, tracking and deletion beside them', async () => {
    const results = []
    for (const episode of generateMemeEpisodes(40)) results.push(...(await run(episode)))
    const scores = memeScores(results)
    console.log(
      Object.entries(scores)
        .map(([k, s]) => `${k} ${s.correct}/${s.total}`)
        .join(', '),
    )
    expect(scores['cascade']!.accuracy).toBeGreaterThanOrEqual(0.9)
    expect(scores['absence']!.accuracy).toBeGreaterThanOrEqual(0.9)
    for (const task of [
      'exact',
      'aggregation',
      'tracking',
      'deletion',
      'cascade',
      'absence',
      'cascade (before)',
      'absence (before)',
      'deletion (before)',
      'exact (before)',
    ])
      expect(scores[task], task).toBeDefined()
  })

  it('renders a changed, an uncertain and a deleted fact deterministically', async () => {
    const { engine, clock } = createTestEngine()
    const deps = engine.facts.dependencies
    await deps.set('team_lead', 'Seokjin Kang')
    await deps.set('weekly_report_recipient', 'Hyunwoo Nam')
    await deps.addRule({ source: 'team_lead', target: 'weekly_report_recipient', effect: 'set', value: 'James Lee' })
    await deps.set('code_reviewer', 'Seoyun Choi')
    await deps.addRule({ source: 'team_lead', target: 'code_reviewer', effect: 'uncertain' })
    await deps.set('review_checklist', 'v2')
    await deps.addRule({ source: 'code_reviewer', target: 'review_checklist', effect: 'uncertain' })
    clock.advance(86_400_000)
    const changes = await deps.set('team_lead', 'Jihoon Ryu')
    expect(changes.map((c) => `${c.key}:${c.certainty}`)).toEqual([
      'team_lead:known',
      'weekly_report_recipient:known',
      'code_reviewer:uncertain',
      'review_checklist:uncertain',
    ])
    expect((await deps.answer('weekly_report_recipient')).text).toBe(
      'James Lee (changed on 2025-06-15, because team_lead changed to Jihoon Ryu on 2025-06-15)',
    )
    expect((await deps.answer('code_reviewer')).text).toBe(
      'unknown now: it was Seoyun Choi, but it depended on team_lead, which changed to Jihoon Ryu on 2025-06-15',
    )
    expect((await deps.answer('review_checklist')).text).toBe(
      'unknown now: it was v2, but it depended on code_reviewer, which became unknown on 2025-06-15',
    )
    await deps.forget('code_reviewer')
    expect(await deps.answer('code_reviewer')).toMatchObject({ status: 'deleted', text: 'you asked me to forget that on 2025-06-15' })
    // The query language sees the propagated state.
    expect((await engine.facts.query('from entity_state where certainty = "uncertain" list key')).value).toEqual([
      { id: expect.any(String), key: 'review_checklist' },
    ])
    await engine.rebuild()
    expect((await deps.answer('weekly_report_recipient')).text).toBe(
      'James Lee (changed on 2025-06-15, because team_lead changed to Jihoon Ryu on 2025-06-15)',
    )
    expect((await deps.answer('code_reviewer')).status).toBe('deleted')
  })

  it('refuses a rule from a key to itself, and a set rule without a value', async () => {
    const { engine } = createTestEngine()
    await expect(engine.facts.dependencies.addRule({ source: 'a', target: 'a', effect: 'uncertain' })).rejects.toThrow(
      'a rule cannot make a depend on itself',
    )
    await expect(engine.facts.dependencies.addRule({ source: 'a', target: 'b', effect: 'set' })).rejects.toThrow(
      'a set rule from a to b needs the value b takes',
    )
  })
})

describe.skipIf(SAMPLE === undefined)('the MEME sample episode sw_033 (reads ../shared/datasets/meme; skipped when absent)', () => {
  it('answers its before and after probes as its gold answers say', async () => {
    const sample = JSON.parse(readFileSync(SAMPLE!, 'utf8')) as {
      before_questions: {
        questions: { task: string; gold_answer: string; entity: string[]; entity_values: Record<string, string | string[]> }[]
      }
      after_questions: {
        questions: { task: string; gold_answer: string; entity: string[]; entity_values: Record<string, string | string[]> }[]
      }
      sessions: { gold_facts?: { entity: string; value: string; fact_text: string }[] }[]
    }
    // The evidence sessions' gold facts in order, as operations: a fact saying "if the team lead changes" is a rule.
    const facts = sample.sessions.flatMap((s) => s.gold_facts ?? [])
    const { engine, clock } = createTestEngine()
    const deps = engine.facts.dependencies
    const beforeChange = facts.findIndex((f, i) => f.entity === 'team_lead' && i > facts.findIndex((g) => g.entity === 'team_lead'))
    const answerAll = async (qs: typeof sample.before_questions.questions) => {
      const results: boolean[] = []
      for (const q of qs) results.push(await judge(q))
      return results
    }
    const judge = async (q: (typeof sample.before_questions.questions)[number]) => {
      const answers: Awaited<ReturnType<typeof deps.answer>>[] = []
      for (const k of q.entity) answers.push(await deps.answer(k))
      const a = answers[0]!
      const gold = q.gold_answer
      if (q.task === 'Tr') return JSON.stringify(a.history) === JSON.stringify(gold.split(', '))
      if (q.task === 'Agg') return q.entity.every((k, i) => answers[i]!.value === q.entity_values[k])
      if (gold.startsWith('Uncertain')) return a.status === 'uncertain' && gold.includes(`'${a.value}'`)
      if (gold.startsWith('No')) return a.status === 'deleted'
      return a.value === gold
    }
    for (const [i, f] of facts.entries()) {
      clock.advance(3_600_000)
      if (i === beforeChange) expect(await answerAll(sample.before_questions.questions)).toEqual([true, true, true, true])
      if (/^If the team lead changes, the (.+) will be (.+)$/.test(f.fact_text))
        await deps.addRule({ source: 'team_lead', target: f.entity, effect: 'set', value: f.value, stated: f.fact_text })
      else if (/delete that from your memory/i.test(f.fact_text)) await deps.forget(f.entity)
      else {
        await deps.set(f.entity, f.value, { quote: f.fact_text })
        // "…; if the team lead changes, this assignment would change": unknown after a change (a later rule naming the new value replaces it).
        if (/if the team lead changes, this assignment would change/i.test(f.fact_text))
          await deps.addRule({ source: 'team_lead', target: f.entity, effect: 'uncertain', stated: f.fact_text })
      }
    }
    expect(await answerAll(sample.after_questions.questions)).toEqual([true, true, true, true, true, true])
  })
})
