import { type Command, Option } from 'commander'
import { invalidInput } from '../../core/errors.js'
import { FACT_STATUSES, type FactStatus } from '../../core/facts/fact-types.js'
import { describeType } from '../../core/facts/fact-values.js'
import type { ProjectRef } from '../../core/types.js'
import type { OpenedMnemo } from '../../runtime/open-mnemo.js'
import { parseIntOption, parseTimeOption, withMnemo } from './cli-kit.js'
import { counted, printJson, type Out } from './output.js'
import type { CliIo, GlobalOptions } from './program.js'

// `mnemo facts …`: the typed fact ledger (docs/FACTS.md) from the command line. Thin: parse flags, call engine.facts, print.

// biome-ignore lint/suspicious/noConfusingVoidType: an action returns nothing or an exit code; `void`, unlike `undefined`, admits `async () => {…}` bodies
type Run = (fn: () => Promise<void | number> | void | number) => Promise<void>
type FactsOptions = GlobalOptions & { project?: string }

const GRAMMAR = `
Query language (one statement):
  from <collection> [where <cond>] [as of <date>] [status <status>|any] <verb>
  verbs: count | sum|avg|min|max|distinct <field> | list [fields] [order by f [desc]] [limit n]
         argmax|argmin <field> [return <field>] [ties all|first|earliest <f>|latest <f>]
         group by <field>|<unit>(<field>) [count|sum <f>|…] (top <n> [ties …] | share >= <pct>% | all)
         compare <count|sum f|…> over <date field> <period> vs <period>
  cond: f = != < <= > >= <value> | f between a and b | f in (a, b) | f in <period> | f has <value>
        | f contains "text" | f is [not] null, with and / or / not / ( )
  values: "text" 12 3.5 2024-06-01 2024-06-01T10:00Z 07:30 true false
  periods: 2024 2024-Q4 2024-H1 2024-03 2024-03-05 2024-01-01..2024-02-15
           first year / last month: the first / last holding records (compare only)
           this <unit> / previous <unit> / past <n> days: on the calendar of today in your time zone
           ("last week" in speech is previous week)
  units: day week month quarter half year
Example: mnemo facts query 'from trips where purpose = "business" and date in 2024 avg duration_days'
`

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw invalidInput(
      what,
      `${what} must be JSON (got ${JSON.stringify(text.slice(0, 60))})`,
      `quote it for the shell: '{"destination":"Tokyo"}'`,
    )
  }
}

async function projectOf(m: OpenedMnemo, o: FactsOptions): Promise<{ project?: ProjectRef }> {
  return o.project === undefined ? {} : { project: await m.engine.projectForWrite(o.project) }
}

function statusOf(value: string | undefined): { status?: FactStatus } {
  if (value === undefined) return {}
  if (!(FACT_STATUSES as readonly string[]).includes(value))
    throw invalidInput('status', `--status must be one of ${FACT_STATUSES.join(', ')} (got ${JSON.stringify(value)})`)
  return { status: value as FactStatus }
}

function timeOf(name: string, value: string | undefined): number | undefined {
  return parseTimeOption(name, value)
}

/** Registers `mnemo facts` and its subcommands on the program. */
export function registerFactsCommands(program: Command, io: CliIo, run: Run): void {
  const out = (o: GlobalOptions): Out => ({ json: o.json === true, stdout: io.stdout, stderr: io.stderr })
  const facts = program
    .command('facts')
    .description('typed facts you can compute with: collections, records, exact queries (docs/FACTS.md)')
  const sub = (spec: string, description: string): Command =>
    facts
      .command(spec)
      .description(description)
      .option('--json', 'print one JSON document on stdout')
      .option('--home <dir>', 'data directory (default: $MNEMO_HOME or ~/.mnemo)')
      .option('--debug', 'print stack traces on failure')
      .option('--project <project>', "project name or path (default: this folder's project)")

  sub('add <collection> <json>', 'record one record (a JSON object) or several (an array); an unknown collection is inferred from them')
    .option('--status <status>', `${FACT_STATUSES.join(', ')} (default done)`)
    .option('--valid-from <time>', 'world time the fact holds from (ISO-8601)')
    .option('--valid-to <time>', 'world time the fact holds until (ISO-8601)')
    .action((collection: string, json: string, o: FactsOptions & { status?: string; validFrom?: string; validTo?: string }) =>
      run(() =>
        withMnemo(io, o, async (m) => {
          const validFrom = timeOf('valid-from', o.validFrom)
          const validTo = timeOf('valid-to', o.validTo)
          const r = await m.engine.facts.add(collection, parseJson(json, 'record'), {
            ...(await projectOf(m, o)),
            ...statusOf(o.status),
            ...(validFrom !== undefined ? { validFrom } : {}),
            ...(validTo !== undefined ? { validTo } : {}),
            provenance: { source: 'user' },
          })
          if (out(o).json) printJson(out(o), r)
          else
            io.stdout(
              `${r.records.map((x) => `${x.outcome} ${x.id}`).join('\n')}\n${r.schemaChanged ? `collection ${collection}: ${r.collection.fields.length} fields\n` : ''}`,
            )
        }),
      ),
    )

  sub('import <file>', 'import records from a JSONL (one object a line) or CSV (header row) file into a collection, all or nothing')
    .requiredOption('--collection <name>', 'the collection to import into')
    .addOption(new Option('--format <format>', 'file format (default: by extension)').choices(['jsonl', 'csv']))
    .option('--status <status>', `${FACT_STATUSES.join(', ')} (default done)`)
    .action((file: string, o: FactsOptions & { collection: string; format?: 'jsonl' | 'csv'; status?: string }) =>
      run(() =>
        withMnemo(io, o, async (m) => {
          const r = await m.engine.facts.importFile(file, o.collection, {
            ...(await projectOf(m, o)),
            ...statusOf(o.status),
            ...(o.format ? { format: o.format } : {}),
          })
          const count = (k: string): number => r.records.filter((x) => x.outcome === k).length
          if (out(o).json)
            printJson(out(o), {
              file: r.file,
              collection: o.collection,
              created: count('created'),
              updated: count('updated'),
              unchanged: count('unchanged'),
              schemaChanged: r.schemaChanged,
            })
          else
            io.stdout(
              `imported ${counted(r.records.length, 'record')} into ${o.collection}: ${count('created')} new, ${count('updated')} updated, ${count('unchanged')} unchanged\n`,
            )
        }),
      ),
    )

  sub('query <query>', 'answer a query exactly from the records (grammar: mnemo facts query --help)')
    .option('--explain', 'show the SQL run and its parameters')
    .addHelpText('after', GRAMMAR)
    .action((query: string, o: FactsOptions & { explain?: boolean }) =>
      run(() =>
        withMnemo(io, o, async (m) => {
          const a = await m.engine.facts.query(query, { ...(await projectOf(m, o)), explain: o.explain === true })
          if (out(o).json) {
            printJson(out(o), a)
            return
          }
          io.stdout(`${a.text}\n`)
          if (a.kind === 'rows') for (const row of a.value as Record<string, unknown>[]) io.stdout(`  ${JSON.stringify(row)}\n`)
          if (o.explain) {
            io.stdout(`records: ${a.records.slice(0, 20).join(' ')}${a.records.length > 20 ? ` … (${a.records.length})` : ''}\n`)
            for (const s of a.sql ?? []) io.stdout(`sql: ${s.sql}\n  params: ${JSON.stringify(s.params)}\n`)
          }
        }),
      ),
    )

  sub('schema', "this project's collections: fields, types, identity, time field, counts and example values").action((o: FactsOptions) =>
    run(() =>
      withMnemo(io, o, async (m) => {
        const schema = await m.engine.facts.schema(await projectOf(m, o))
        if (out(o).json) {
          printJson(out(o), { collections: schema })
          return
        }
        if (schema.length === 0) io.stdout('no collections yet (mnemo facts add <collection> <json> creates one)\n')
        for (const c of schema) {
          io.stdout(
            `${c.name}: ${counted(c.records, 'record')}${c.from !== undefined ? ` from ${c.from} to ${c.to}` : ''}${c.identity.length > 0 ? `; identity (${c.identity.join(', ')})` : ''}${c.timeField ? `; time ${c.timeField}` : ''}\n`,
          )
          for (const f of c.fields)
            io.stdout(
              `  ${f.name}: ${describeType(f)}${(c.examples[f.name] ?? []).length > 0 ? `  e.g. ${(c.examples[f.name] ?? []).map((v) => JSON.stringify(v)).join(', ')}` : ''}\n`,
            )
        }
      }),
    ),
  )

  sub('declare <json>', 'declare a collection or extend one: {"name","fields":[{"name","type"}],"identity":[…],"timeField"}').action(
    (json: string, o: FactsOptions) =>
      run(() =>
        withMnemo(io, o, async (m) => {
          const spec = await m.engine.facts.declare(parseJson(json, 'collection'), await projectOf(m, o))
          if (out(o).json) printJson(out(o), spec)
          else io.stdout(`collection ${spec.name}: ${spec.fields.map((f) => `${f.name} ${describeType(f)}`).join(', ')}\n`)
        }),
      ),
  )

  sub('list <collection>', "a collection's records, oldest recorded first (or sorted by a field)")
    .option('--limit <n>', 'most records, 1–1000', '50')
    .option('--offset <n>', 'skip this many', '0')
    .option('--state <state>', 'current, retracted, superseded (earlier versions) or deleted', 'current')
    .option('--sort <field>', 'sort by this field (not a list)')
    .option('--desc', 'largest / latest first')
    .action((collection: string, o: FactsOptions & { limit?: string; offset?: string; state?: string; sort?: string; desc?: boolean }) =>
      run(() =>
        withMnemo(io, o, async (m) => {
          const states = ['current', 'retracted', 'superseded', 'deleted'] as const
          const state = states.find((x) => x === (o.state ?? 'current'))
          if (state === undefined)
            throw invalidInput('state', `--state must be one of ${states.join(', ')} (got ${JSON.stringify(o.state)})`)
          const r = await m.engine.facts.list(collection, {
            ...(await projectOf(m, o)),
            limit: parseIntOption('limit', o.limit, 1, 1000) ?? 50,
            offset: parseIntOption('offset', o.offset, 0, 1_000_000_000) ?? 0,
            state,
            ...(o.sort !== undefined ? { sort: o.sort } : {}),
            ...(o.desc ? { order: 'desc' as const } : {}),
          })
          if (out(o).json) printJson(out(o), r)
          else {
            for (const rec of r.records) io.stdout(`${rec.id} v${rec.version} [${rec.status}] ${JSON.stringify(rec.values)}\n`)
            for (const d of r.deleted) io.stdout(`${d.id}: ${d.text}\n`)
            io.stdout(`${r.records.length + r.deleted.length} of ${r.total} ${state} records\n`)
          }
        }),
      ),
    )

  sub('show <id>', 'a record with its history (or when it was deleted)').action((id: string, o: FactsOptions) =>
    run(() =>
      withMnemo(io, o, async (m) => {
        const r = await m.engine.facts.show(id, await projectOf(m, o))
        if (out(o).json) printJson(out(o), r)
        else if ('deleted' in r) io.stdout(`${id}: ${r.deleted.text}\n`)
        else {
          io.stdout(
            `${r.record.id} in ${r.record.collection} [${r.record.status}] version ${r.record.version}${r.record.retractedAt !== undefined ? ', retracted' : ''}\n${JSON.stringify(r.record.values, null, 2)}\n`,
          )
          for (const v of r.history)
            io.stdout(
              `  v${v.version} ${v.action} recorded ${new Date(v.recordedAt).toISOString()} (${v.provenance.source}): ${JSON.stringify(v.values)}\n`,
            )
        }
      }),
    ),
  )

  sub('update <id> <json>', 'change fields of a record (a new version)')
    .option('--status <status>', `${FACT_STATUSES.join(', ')}`)
    .action((id: string, json: string, o: FactsOptions & { status?: string }) =>
      run(() =>
        withMnemo(io, o, async (m) => {
          const r = await m.engine.facts.update(id, parseJson(json, 'values'), { ...(await projectOf(m, o)), ...statusOf(o.status) })
          if (out(o).json) printJson(out(o), r)
          else io.stdout(`updated ${r.id} (version ${r.version})\n`)
        }),
      ),
    )

  sub(
    'state <key> [value]',
    'dependent facts: state a value for a key (its rules run: dependants change or become unknown), or, without a value, answer it',
  ).action((key: string, value: string | undefined, o: FactsOptions) =>
    run(() =>
      withMnemo(io, o, async (m) => {
        const deps = m.engine.facts.dependencies
        if (value === undefined) {
          const a = await deps.answer(key, await projectOf(m, o))
          if (out(o).json) printJson(out(o), a)
          else io.stdout(`${key}: ${a.text}\n`)
          return
        }
        const changes = await deps.set(key, value, await projectOf(m, o))
        if (out(o).json) printJson(out(o), { changes })
        else
          for (const c of changes)
            io.stdout(
              `${c.key}: ${c.certainty === 'uncertain' ? `unknown now (was ${c.before})` : `${c.before ?? '(none)'} → ${c.after}`}${c.because ? `, because ${c.because}` : ''}\n`,
            )
      }),
    ),
  )

  sub('rule <source> <target>', 'a dependency rule: when <source> changes, <target> takes --set <value>, or becomes unknown (--uncertain)')
    .option('--set <value>', 'the value the target takes')
    .option('--uncertain', 'the target becomes unknown')
    .action((source: string, target: string, o: FactsOptions & { set?: string; uncertain?: boolean }) =>
      run(() =>
        withMnemo(io, o, async (m) => {
          if ((o.set === undefined) === (o.uncertain !== true))
            throw invalidInput('set', 'give exactly one of --set <value> and --uncertain')
          await m.engine.facts.dependencies.addRule(
            { source, target, effect: o.set !== undefined ? 'set' : 'uncertain', ...(o.set !== undefined ? { value: o.set } : {}) },
            await projectOf(m, o),
          )
          if (out(o).json)
            printJson(out(o), {
              source,
              target,
              effect: o.set !== undefined ? 'set' : 'uncertain',
              ...(o.set !== undefined ? { value: o.set } : {}),
            })
          else io.stdout(`when ${source} changes, ${target} ${o.set !== undefined ? `becomes ${o.set}` : 'becomes unknown'}\n`)
        }),
      ),
    )

  sub(
    'dependants <key>',
    'the facts that depend on <key> through the rules, each with its status (uncertain ones wait to be resolved)',
  ).action((key: string, o: FactsOptions) =>
    run(() =>
      withMnemo(io, o, async (m) => {
        const r = await m.engine.facts.dependencies.dependants(key, await projectOf(m, o))
        if (out(o).json) printJson(out(o), r)
        else {
          io.stdout(`${key}: ${r.answer.text}\n`)
          if (r.dependants.length === 0) io.stdout('nothing depends on it\n')
          for (const d of r.dependants) io.stdout(`  ${d.key} [${d.status}] ${d.text} (via ${d.via}, ${d.effect})\n`)
        }
      }),
    ),
  )

  sub(
    'resolve <key> [value]',
    'an uncertain fact: confirm the value it had (no value), or give the value it has now (its rules run)',
  ).action((key: string, value: string | undefined, o: FactsOptions) =>
    run(() =>
      withMnemo(io, o, async (m) => {
        const changes = await m.engine.facts.dependencies.resolve(key, value, await projectOf(m, o))
        if (out(o).json) printJson(out(o), { changes })
        else
          for (const c of changes)
            io.stdout(
              `${c.key}: ${c.certainty === 'uncertain' ? `unknown now (was ${c.before})` : c.before === c.after ? `confirmed ${c.after}` : `${c.before ?? '(none)'} → ${c.after}`}${c.because ? `, because ${c.because}` : ''}\n`,
            )
      }),
    ),
  )

  sub('forget-state <key>', 'forget a dependent fact for good (answers then say it was forgotten on request)').action(
    (key: string, o: FactsOptions) =>
      run(() =>
        withMnemo(io, o, async (m) => {
          await m.engine.facts.dependencies.forget(key, await projectOf(m, o))
          if (out(o).json) printJson(out(o), { forgotten: key })
          else io.stdout(`forgot ${key}\n`)
        }),
      ),
  )

  sub('delete <id>', 'delete a record for good: its values leave every view, index and export').action((id: string, o: FactsOptions) =>
    run(() =>
      withMnemo(io, o, async (m) => {
        const r = await m.engine.facts.delete(id, { ...(await projectOf(m, o)), actor: 'cli' })
        if (out(o).json) printJson(out(o), r)
        else io.stdout(`deleted ${r.id} from ${r.collection} (${counted(r.events, 'event')} removed from the log)\n`)
      }),
    ),
  )
}
