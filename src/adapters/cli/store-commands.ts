import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, statSync, writeFileSync, writeSync } from 'node:fs'
import path from 'node:path'
import { toIso } from '../../core/clock.js'
import { invalidInput } from '../../core/errors.js'
import type { Project } from '../../core/types.js'
import { exportTargetError } from '../../engine/export-target.js'
import { toImportFormat } from '../../engine/import-files.js'
import type { CliIo, GlobalOptions } from './program.js'
import { formatImport, printJson, type Out } from './output.js'
import { parseIntOption, parseTimeOption, projectIds, withMnemo } from './cli-kit.js'

// CLI commands that maintain the store: import, status, rebuild, compact, consolidate, export, redact, reindex.

export async function importCmd(io: CliIo, out: Out, target: string, o: GlobalOptions & { format?: string; project?: string }): Promise<void> {
  const format = toImportFormat(o.format)
  const resolved = path.resolve(io.cwd, target)
  await withMnemo(io, o, async (m) => {
    const project = o.project === undefined ? undefined : m.engine.projectForWrite(o.project)
    const report = await m.engine.importPath(resolved, { format, ...(project ? { project } : {}) })
    if (out.json) printJson(out, report)
    else out.stdout(formatImport(report))
  })
}

export async function status(io: CliIo, out: Out, o: GlobalOptions): Promise<void> {
  await withMnemo(io, o, async (m) => {
    const { remoteServer, checkRemote } = await import('../../runtime/remote-server.js')
    const remote = remoteServer(io.env, m.config.home)
    const server = remote ? await checkRemote(remote) : null
    const stats = m.engine.stats()
    const errors = m.errors.tail(5)
    const derivation = m.engine.derivation()
    const doc = {
      home: m.config.home,
      database: m.config.dbPath,
      /** Opened read-only: the data directory or database cannot be written by this user (reads work, writes fail). */
      readOnly: m.readOnly,
      counts: { events: stats.events, projects: stats.projects, sessions: stats.sessions, observations: stats.observations, memories: stats.memories },
      bytes: stats.bytes,
      lastCaptureAt: stats.lastEventAt === undefined ? null : toIso(stats.lastEventAt),
      spool: { pending: m.spool.count(), bad: m.spool.badCount(), dir: m.config.spoolDir },
      /** Team mode: where hooks send events, and whether they can now. */
      server,
      /** Which derivation the stored rows were made with; `stale`: `mnemo rebuild` would re-derive them with this version's. */
      derivation,
      errors,
    }
    if (out.json) {
      printJson(out, doc)
      return
    }
    const c = doc.counts
    out.stdout(
      [
        `data directory  ${doc.home}`,
        `database        ${doc.database} (${(doc.bytes / 1024).toFixed(0)} KiB)${doc.readOnly ? ', opened read-only: this user cannot write it, so captures and changes fail' : ''}`,
        `counts          ${c.events} events · ${c.projects} projects · ${c.sessions} sessions · ${c.observations} observations · ${c.memories} memories`,
        `last capture    ${doc.lastCaptureAt ?? 'never'}`,
        `spool           ${doc.spool.pending} pending · ${doc.spool.bad} unreadable (${doc.spool.dir})`,
        ...(server ? [`team server     ${server.url}: ${server.detail}${server.ok ? '' : ' (hooks spool until this is fixed)'}`] : []),
        ...(derivation.stale ? [`derived rows    made by an older mnemo (derivation ${derivation.derivedWith}; this one makes ${derivation.current}): run mnemo rebuild`] : []),
        `recent errors   ${errors.length === 0 ? 'none' : ''}`,
        ...errors.map((e) => `  ${e.at}  ${e.where}  ${e.code}: ${e.message}`),
      ].join('\n') + '\n',
    )
  })
}

export async function rebuild(io: CliIo, out: Out, o: GlobalOptions): Promise<void> {
  await withMnemo(io, o, (m) => {
    const r = m.engine.rebuild()
    if (out.json) printJson(out, r)
    else out.stdout(`rebuilt ${r.observations} observations from ${r.events} events\n`)
  })
}

/**
 * `mnemo compact --before <time>`: folds agent capture events older than the
 * time into what they derived (see `MnemoEngine.compact`), then vacuums.
 *
 * @throws {MnemoError} `INVALID_INPUT` — no or a bad `--before`, a `--project` matching several projects.
 */
export async function compact(io: CliIo, out: Out, o: GlobalOptions & { before?: string; project?: string; vacuum?: boolean }): Promise<void> {
  const before = parseTimeOption('before', o.before)
  if (before === undefined) throw invalidInput('before', 'compact needs --before <time>: events older than it are folded (e.g. --before 2026-01-01)')
  await withMnemo(io, o, (m) => {
    let project: Project | undefined
    if (o.project !== undefined) {
      const projects = m.engine.resolveProjects(o.project)
      if (projects.length !== 1) throw invalidInput('project', `--project ${JSON.stringify(o.project)} matches ${projects.length} projects; give its path`)
      project = projects[0]!
    }
    const r = m.engine.compact({ before, ...(project ? { project } : {}), vacuum: o.vacuum !== false }, 'cli')
    if (out.json) printJson(out, r)
    else {
      const kb = (n: number): string => `${(n / 1024).toFixed(1)} KiB`
      out.stdout(
        `folded ${r.events} event(s) before ${new Date(before).toISOString()}${project ? ` in ${project.name}` : ''}: payloads ${kb(r.payloadBytesBefore)} → ${kb(r.payloadBytesAfter)}; ` +
          `database ${kb(r.fileBytesBefore)} → ${kb(r.fileBytesAfter)}\n`,
      )
    }
  })
}

export async function consolidate(io: CliIo, out: Out, o: GlobalOptions & { idleMinutes?: string }): Promise<void> {
  const idle = parseIntOption('idle-minutes', o.idleMinutes, 0, 525_600) ?? 30
  await withMnemo(io, o, async (m) => {
    const r = await m.engine.consolidate({ idleMs: idle * 60_000 })
    if (out.json) printJson(out, r)
    else {
      out.stdout(
        `consolidated ${r.sessions} finished session(s): ${r.summaries} summary(ies), ${r.lessons} lesson(s), ${r.procedures} procedure version(s), ${r.memories} other memory(ies) ` +
          `(model: ${r.via.llm}, deterministic: ${r.via.deterministic}); archived ${r.archived} decayed memory(ies)\n`,
      )
      for (const e of r.errors) out.stderr(`warning: model fell back to the deterministic path for ${e}\n`)
    }
  })
}

export async function exportCmd(io: CliIo, out: Out, o: GlobalOptions & { project?: string; format?: string; out?: string; force?: boolean }): Promise<void> {
  if (o.format === 'markdown' && o.out === undefined) throw invalidInput('out', 'a Markdown export needs --out <folder>')
  await withMnemo(io, o, (m) => {
    const projects = o.project === undefined ? undefined : m.engine.resolveProjects(o.project)
    if (projects && projects.length !== 1) throw invalidInput('project', `--project ${JSON.stringify(o.project)} matches ${projects.length} projects; give its path`)
    const project = projects?.[0]
    if (o.format === 'markdown') {
      const dir = path.resolve(io.cwd, o.out!)
      if (existsSync(dir) && !statSync(dir).isDirectory()) throw invalidInput('out', `--out ${JSON.stringify(o.out)} is a file; a Markdown export needs a folder`)
      const files = m.engine.exportMarkdown(project ? { project } : {})
      // Every file is checked before any is written: a refusal leaves the folder as it was.
      const refused = exportTargetError(dir, m.config, true) ?? [...files.keys()].map((name) => exportTargetError(path.join(dir, name), m.config, o.force === true)).find((e) => e !== undefined)
      if (refused) throw refused
      mkdirSync(dir, { recursive: true })
      for (const [name, text] of files) writeFileSync(path.join(dir, name), text)
      if (out.json) printJson(out, { folder: dir, files: [...files.keys()] })
      else out.stdout(`wrote ${files.size} Markdown file(s) to ${dir}\n`)
      return
    }
    if (o.out === undefined) {
      if (out.json) throw invalidInput('json', '--json cannot be combined with an export to stdout; add --out <file>')
      m.engine.exportJsonl((line) => out.stdout(`${line}\n`), project ? { project } : {})
      return
    }
    const file = path.resolve(io.cwd, o.out)
    if (existsSync(file) && !statSync(file).isFile()) throw invalidInput('out', `--out ${JSON.stringify(o.out)} is a folder; give a file name`)
    const refused = exportTargetError(file, m.config, o.force === true)
    if (refused) throw refused
    mkdirSync(path.dirname(file), { recursive: true })
    const tmp = `${file}.tmp-${process.pid}`
    const fd = openSync(tmp, 'w', 0o600)
    let manifest
    try {
      manifest = m.engine.exportJsonl((line) => writeSync(fd, `${line}\n`), project ? { project } : {})
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(tmp, file)
    if (out.json) printJson(out, { file, manifest })
    else out.stdout(`exported ${manifest.counts.events} events, ${manifest.counts.tombstones} tombstones, ${manifest.counts.audit} audit records to ${file}\n`)
  })
}

export async function redact(io: CliIo, out: Out, o: GlobalOptions & { rescan?: boolean }): Promise<void> {
  if (!o.rescan) throw invalidInput('rescan', 'mnemo redact needs --rescan (rewrites stored events in place)')
  await withMnemo(io, o, (m) => {
    const r = m.engine.rescanSecrets('cli')
    if (out.json) printJson(out, r)
    else out.stdout(`redacted ${r.eventsChanged} event(s); rebuilt ${r.observations} observations from ${r.events} events (audit record written)\n`)
  })
}

export async function reindex(io: CliIo, out: Out, o: GlobalOptions & { project?: string }): Promise<void> {
  await withMnemo(io, o, async (m) => {
    const ids = projectIds(m, o.project)
    let last = ''
    const r = await m.engine.reindex({
      ...(ids ? { projectIds: ids as never } : {}),
      onProgress: (stage, done, total) => {
        const line = `${stage}: ${done}/${total}`
        if (line !== last) io.stderr(`\r${line}`)
        last = line
      },
    })
    if (last) io.stderr('\n')
    if (out.json) printJson(out, r)
    else out.stdout(`builtin model refitted for ${r.builtinProjects} project(s)${r.space ? `; ${r.embedded} document(s) embedded into ${r.space}` : '; no neural embedder configured (MNEMO_EMBEDDER)'}\n`)
  })
}
