import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runCliCaptured } from '../../testing/run-cli.js'

let tmp: string
let home: string

beforeEach(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'mnemo-facts-cli-'))
  home = path.join(tmp, 'home')
})
afterEach(() => rmSync(tmp, { recursive: true, force: true }))

const cli = (argv: string[]) => runCliCaptured(argv, { env: { MNEMO_HOME: home, HOME: tmp }, cwd: tmp })

describe('mnemo facts', () => {
  it('adds, imports, answers with --json, and explains', async () => {
    expect((await cli(['facts', 'add', 'trips', '{"id":1,"date":"2024-02-01","destination":"Tokyo","nights":4}'])).code).toBe(0)
    const file = path.join(tmp, 'more.csv')
    writeFileSync(file, 'id,date,destination,nights\n2,2024-08-01,Lima,9\n3,2025-01-05,Oslo,2\n')
    expect((await cli(['facts', 'import', file, '--collection', 'trips'])).stdout).toBe(
      'imported 2 records into trips: 2 new, 0 updated, 0 unchanged\n',
    )
    const one = path.join(tmp, 'one.csv')
    writeFileSync(one, 'id,date,destination,nights\n4,2025-03-01,Rome,3\n')
    expect((await cli(['facts', 'import', one, '--collection', 'trips'])).stdout).toBe(
      'imported 1 record into trips: 1 new, 0 updated, 0 unchanged\n',
    )
    const q = await cli(['facts', 'query', 'from trips where date in 2024 sum nights', '--json'])
    expect(JSON.parse(q.stdout)).toMatchObject({ value: 13, coverage: { matched: 2 } })
    const explained = await cli(['facts', 'query', 'from trips where destination = "Lima" count', '--explain'])
    expect(explained.stdout).toMatch(/^1 \(over 1 record from 2024-08-01 to 2024-08-01\)\nrecords: fct_\w+\nsql: WITH r AS/)
    expect((await cli(['facts', 'schema'])).stdout).toContain('nights: integer  e.g. 4, 9, 2')
  })

  it('lists records by state, sorted by a field, and refuses a bad state or sort naming it', async () => {
    await cli(['facts', 'add', 'trips', '[{"id":1,"date":"2024-02-01","nights":4},{"id":2,"date":"2024-03-01","nights":9}]'])
    await cli(['facts', 'add', 'trips', '{"id":1,"date":"2024-02-01","nights":5}'])
    const sorted = await cli(['facts', 'list', 'trips', '--sort', 'nights', '--desc'])
    expect(sorted.stdout).toMatch(
      /^fct_\w+ v1 \[done\] \{"external_id":2,"date":"2024-03-01","nights":9\}\nfct_\w+ v2 \[done\] \{"external_id":1,"date":"2024-02-01","nights":5\}\n2 of 2 current records\n$/,
    )
    expect((await cli(['facts', 'list', 'trips', '--state', 'superseded'])).stdout).toMatch(
      / v1 \[done\] .*"nights":4\}\n1 of 1 superseded records\n$/,
    )
    expect(await cli(['facts', 'list', 'trips', '--state', 'gone'])).toMatchObject({
      code: 2,
      stderr: 'mnemo: --state must be one of current, retracted, superseded, deleted (got "gone")\n',
    })
    expect((await cli(['facts', 'list', 'trips', '--sort', 'cost'])).stderr).toBe(
      'mnemo: trips has no field cost to sort by (fields: external_id, date, nights)\n',
    )
  })

  it('exits 2 naming the record and field of a bad value, and the field of a bad query', async () => {
    await cli(['facts', 'add', 'trips', '{"date":"2024-02-01","nights":4}'])
    const bad = await cli(['facts', 'add', 'trips', '{"date":"2024-02-01","nights":"four"}'])
    expect(bad).toMatchObject({ code: 2, stderr: 'mnemo: trips record 1.nights must be integer (got "four")\n' })
    const q = await cli(['facts', 'query', 'from trips where cost > 1 count'])
    expect(q.code).toBe(2)
    expect(q.stderr).toMatch(/^mnemo: query: trips has no field cost/)
  })

  it('states dependent facts and rules, and answers what changed and what became unknown', async () => {
    await cli(['facts', 'state', 'team_lead', 'Seokjin Kang'])
    await cli(['facts', 'state', 'code_reviewer', 'Seoyun Choi'])
    await cli(['facts', 'rule', 'team_lead', 'code_reviewer', '--uncertain'])
    expect((await cli(['facts', 'state', 'team_lead', 'Jihoon Ryu'])).stdout).toMatch(
      /^team_lead: Seokjin Kang → Jihoon Ryu\ncode_reviewer: unknown now \(was Seoyun Choi\), because it depended on team_lead, which changed to Jihoon Ryu on \d{4}-\d{2}-\d{2}\n$/,
    )
    expect((await cli(['facts', 'state', 'code_reviewer'])).stdout).toMatch(
      /^code_reviewer: unknown now: it was Seoyun Choi, but it depended on team_lead/,
    )
    expect((await cli(['facts', 'rule', 'a', 'b'])).code).toBe(2)
  })

  it('lists what depends on a fact with its status, and confirms or re-resolves an uncertain one', async () => {
    await cli(['facts', 'state', 'fare', '840 USD'])
    await cli(['facts', 'state', 'trip_total', '1290 USD'])
    await cli(['facts', 'rule', 'fare', 'trip_total', '--uncertain'])
    await cli(['facts', 'state', 'fare', '910 USD'])
    expect((await cli(['facts', 'dependants', 'fare'])).stdout).toMatch(
      /^fare: 910 USD\n {2}trip_total \[uncertain\] unknown now: it was 1290 USD, but it depended on fare, which changed to 910 USD on \d{4}-\d{2}-\d{2} \(via fare, uncertain\)\n$/,
    )
    expect((await cli(['facts', 'resolve', 'trip_total'])).stdout).toBe('trip_total: confirmed 1290 USD\n')
    expect((await cli(['facts', 'dependants', 'fare'])).stdout).toBe(
      'fare: 910 USD\n  trip_total [current] 1290 USD (via fare, uncertain)\n',
    )
    const again = await cli(['facts', 'resolve', 'trip_total', '1300 USD'])
    expect(again.code).toBe(2)
    expect(again.stderr).toMatch(/^mnemo: trip_total \(record fct_\w+\)\.certainty is known, not uncertain: it is "1290 USD"/)
    expect((await cli(['facts', 'dependants', 'trip_total'])).stdout).toBe('trip_total: 1290 USD\nnothing depends on it\n')
  })
})
