import { invalidInput } from '../../core/errors.js'
import type { MigrationReport } from '../../engine/migrate-store.js'
import type { OpenedMnemo } from '../../runtime/open-mnemo.js'
import { counted, type Out, printJson } from './output.js'
import type { CliIo, GlobalOptions } from './program.js'

// `mnemo migrate`: copy a store into another database (embedded SQLite ⇄ PostgreSQL).

/** The rows of the report, in the order printed. */
const KINDS = ['events', 'sessions', 'observations', 'memories', 'tombstones', 'audit', 'facts'] as const

/**
 * `mnemo migrate --to <database>` copies this data directory's store (its SQLite file) into `<database>`;
 * `mnemo migrate --from <database>` copies `<database>` into this data directory's store; with both, from one into the
 * other. A database is a `postgres://user:password@host:5432/db` URL or an SQLite file path. The target must be empty
 * unless `--force` (a merge: events it holds are skipped). Everything is copied, every user's data, and the counts are
 * compared store against store (see `migrateStore`).
 *
 * @throws {MnemoError} `INVALID_INPUT` — neither `--to` nor `--from`, the same database twice, an unknown scheme, or a
 *   target that holds data without `--force` (nothing is written).
 * @throws {MnemoError} `STORE_UNAVAILABLE` — a database cannot be reached (named with its password masked).
 * @throws {MnemoError} `IMPORT_FAILED` — the counts differ after the copy.
 */
export async function migrate(io: CliIo, out: Out, o: GlobalOptions & { to?: string; from?: string; force?: boolean }): Promise<void> {
  if (o.to === undefined && o.from === undefined) {
    throw invalidInput(
      'to',
      'mnemo migrate needs --to <database> or --from <database>',
      "mnemo migrate --to postgres://user:password@host:5432/db copies this data directory's store there; --from copies one here",
    )
  }
  const { openMnemo, openMnemoOn } = await import('../../runtime/open-mnemo.js')
  const { parseDatabaseTarget } = await import('../../runtime/open-database.js')
  const from = o.from === undefined ? undefined : parseDatabaseTarget(o.from, '--from', io.cwd)
  const to = o.to === undefined ? undefined : parseDatabaseTarget(o.to, '--to', io.cwd)
  const base = { env: io.env, cwd: io.cwd, allUsers: true, ...(o.home ? { home: o.home } : {}) }
  const opened: OpenedMnemo[] = []
  try {
    const source = from ? await openMnemoOn(from, base) : openMnemo(base)
    opened.push(source)
    const fromLabel = from?.label ?? source.config.dbPath
    const toLabel = to?.label ?? source.config.dbPath
    if (fromLabel === toLabel) {
      throw invalidInput('to', `mnemo migrate: the source and the target are the same database (${toLabel})`, 'name another database')
    }
    const target = to ? await openMnemoOn(to, base) : openMnemo(base)
    opened.push(target)
    const report = await source.engine.migrateTo(target.engine, { targetLabel: toLabel, force: o.force === true })
    if (out.json) printJson(out, { from: fromLabel, to: toLabel, ...report })
    else out.stdout(formatMigration(fromLabel, toLabel, report))
  } finally {
    for (const m of opened.reverse()) await m.close()
  }
}

function formatMigration(from: string, to: string, r: MigrationReport): string {
  const lines = [
    `copied ${from} → ${to}${r.merged ? ` (merged: ${counted(r.duplicates, 'event')} ${r.duplicates === 1 ? 'was' : 'were'} there already)` : ''}`,
  ]
  for (const k of KINDS) lines.push(`  ${k.padEnd(13)} ${String(r[k].source).padStart(9)} → ${String(r[k].target).padStart(9)}`)
  lines.push('counts checked: the target holds what the source holds (its audit log one more entry: this copy)')
  return `${lines.join('\n')}\n`
}
