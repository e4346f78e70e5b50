import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { toIso } from '../../core/clock.js'
import { invalidInput, MnemoError } from '../../core/errors.js'
import type { ImportReport } from '../../engine/mnemo.js'
import type { ExportManifest } from '../../engine/export.js'
import { Spool, type SpooledEvent } from '../../runtime/spool.js'
import type { Project } from '../../core/types.js'
import { exportTargetError } from '../../engine/export-target.js'
import { toImportFormat } from '../../engine/import-format.js'
import type { CliIo, GlobalOptions } from './program.js'
import { counted, formatImport, printJson, type Out } from './output.js'
import { parseIntOption, parseTimeOption, projectIds, withMnemo } from './cli-kit.js'

// CLI commands that maintain the store: import, status, rebuild, compact, consolidate, export, redact, reindex.

/**
 * `mnemo import [path]`: a file or folder; with no path, each agent's default folder that exists on this
 * machine (`defaultImportFolders`), each imported in turn; a folder with nothing to import is reported, not fatal.
 *
 * @throws {MnemoError} `NOT_FOUND` — no path and none of the default folders exists (the message lists them).
 */
export async function importCmd(
  io: CliIo,
  out: Out,
  target: string | undefined,
  o: GlobalOptions & { format?: string; project?: string },
): Promise<void> {
  const format = toImportFormat(o.format)
  const defaults = target === undefined ? defaultImportFolders(io.env, process.platform) : undefined
  const folders = defaults ? defaults.filter((d) => existsSync(d.folder)) : [{ agent: undefined, folder: path.resolve(io.cwd, target!) }]
  if (defaults && folders.length === 0) {
    throw new MnemoError(
      'NOT_FOUND',
      `nothing to import: none of the agents' default folders exists (${defaults.map((d) => d.folder).join(', ')})`,
      {
        details: { kind: 'file', id: defaults.map((d) => d.folder).join(',') },
        hint: 'give a file or folder: mnemo import <path>',
      },
    )
  }
  await withMnemo(io, o, async (m) => {
    const project = o.project === undefined ? undefined : await m.engine.projectForWrite(o.project)
    if (!defaults) {
      const report = await m.engine.importPath(folders[0]!.folder, { format, ...(project ? { project } : {}) })
      if (out.json) printJson(out, report)
      else out.stdout(formatImport(report))
      return
    }
    const results: { agent: string; folder: string; report?: ImportReport; error?: string }[] = []
    for (const { agent, folder } of folders) {
      try {
        const report = await m.engine.importPath(folder, { format, ...(project ? { project } : {}) })
        results.push({ agent: agent!, folder, report })
        if (!out.json) out.stdout(`${agent} (${folder}):\n${formatImport(report)}`)
      } catch (error) {
        // One agent's folder with nothing readable does not stop the others.
        if (!MnemoError.is(error, 'IMPORT_FAILED')) throw error
        results.push({ agent: agent!, folder, error: error.message })
        if (!out.json) out.stdout(`${agent} (${folder}): ${error.message}\n`)
      }
    }
    if (out.json)
      printJson(out, {
        folders: results.map((r) => ({ agent: r.agent, folder: r.folder, report: r.report ?? null, error: r.error ?? null })),
      })
    if (results.every((r) => r.report === undefined)) {
      throw new MnemoError(
        'IMPORT_FAILED',
        `no records imported from the agents' default folders (${folders.map((f) => f.folder).join(', ')})`,
        { details: { file: folders.map((f) => f.folder).join(','), read: 0, skipped: 0 } },
      )
    }
  })
}

/**
 * Where each agent keeps its sessions by default (the README's import table), honouring the agents' own
 * overrides: Claude Code `$CLAUDE_CONFIG_DIR/projects` (default `~/.claude/projects`), Codex
 * `$CODEX_HOME/sessions` (`~/.codex/sessions`), Gemini CLI `$GEMINI_CLI_HOME/.gemini/tmp` (`~/.gemini/tmp`),
 * OpenCode `$XDG_DATA_HOME/opencode/storage` (`~/.local/share/opencode/storage`), Cursor
 * `$XDG_CONFIG_HOME/Cursor/User` on Linux (`~/.config/Cursor/User`), `~/Library/Application Support/Cursor/User`
 * on macOS, `%APPDATA%\Cursor\User` on Windows.
 */
export function defaultImportFolders(env: CliIo['env'], platform: NodeJS.Platform): { agent: string; folder: string }[] {
  const home = env['HOME'] || env['USERPROFILE'] || os.homedir()
  const dir = (name: string, fallback: string): string => (env[name] ? String(env[name]) : fallback)
  const cursor =
    platform === 'darwin'
      ? path.join(home, 'Library', 'Application Support', 'Cursor', 'User')
      : platform === 'win32'
        ? path.join(dir('APPDATA', path.join(home, 'AppData', 'Roaming')), 'Cursor', 'User')
        : path.join(dir('XDG_CONFIG_HOME', path.join(home, '.config')), 'Cursor', 'User')
  return [
    { agent: 'claude-code', folder: path.join(dir('CLAUDE_CONFIG_DIR', path.join(home, '.claude')), 'projects') },
    { agent: 'codex', folder: path.join(dir('CODEX_HOME', path.join(home, '.codex')), 'sessions') },
    { agent: 'gemini', folder: path.join(dir('GEMINI_CLI_HOME', home), '.gemini', 'tmp') },
    { agent: 'opencode', folder: path.join(dir('XDG_DATA_HOME', path.join(home, '.local', 'share')), 'opencode', 'storage') },
    { agent: 'cursor', folder: cursor },
  ]
}

/** What `spool/bad/` holds: inputs a hook or a drain could not store, kept for inspection. */
function badSpool(m: { config: { spoolDir: string } }): { spool: Spool; bad: Spool; dir: string } {
  const dir = path.join(m.config.spoolDir, 'bad')
  return { spool: new Spool(m.config.spoolDir), bad: new Spool(dir), dir }
}

/** `mnemo spool list`: each file of `spool/bad/`, oldest first, with its event, agent, time and size. */
export async function spoolList(io: CliIo, out: Out, o: GlobalOptions): Promise<void> {
  await withMnemo(io, o, async (m) => {
    const { bad, dir } = badSpool(m)
    const items = bad.list().map((file) => {
      const full = path.join(dir, file)
      let item: SpooledEvent | undefined
      try {
        item = JSON.parse(readFileSync(full, 'utf8')) as SpooledEvent
      } catch {
        item = undefined
      }
      const readable = item !== undefined && typeof item.event === 'string' && typeof item.stdin === 'string'
      return {
        file,
        bytes: statSync(full).size,
        event: readable ? item!.event : null,
        agent: readable ? (item!.agent ?? 'claude-code') : null,
        spooledAt: readable && Number.isFinite(item!.spooledAt) ? toIso(item!.spooledAt) : null,
      }
    })
    if (out.json) {
      printJson(out, { dir, files: items })
      return
    }
    if (items.length === 0) out.stdout(`spool/bad/ is empty (${dir})\n`)
    for (const i of items) out.stdout(`${i.file}  ${i.event ?? '(unreadable)'}  ${i.agent ?? ''}  ${i.spooledAt ?? ''}  ${i.bytes} B\n`)
    if (items.length > 0)
      out.stdout(
        `${items.length} file${items.length === 1 ? '' : 's'} in ${dir}: mnemo spool retry stores them again, mnemo spool purge --yes deletes them\n`,
      )
  })
}

/**
 * `mnemo spool retry`: moves every file of `spool/bad/` back into the spool and drains it, as the next hook
 * would; an input that still cannot be stored goes back to `spool/bad/` (and `logs/errors.jsonl` says why).
 */
export async function spoolRetry(io: CliIo, out: Out, o: GlobalOptions): Promise<void> {
  await withMnemo(io, o, async (m) => {
    const { spool, bad, dir } = badSpool(m)
    const files = bad.list()
    for (const file of files) renameSync(path.join(dir, file), path.join(m.config.spoolDir, file))
    let failed: unknown
    for (let round = 0; spool.count() > 0; round++) {
      const r = await m.drainSpool()
      failed = r.failed
      if (r.drained === 0 || failed !== undefined || round > 10_000) break
    }
    const stillBad = files.filter((f) => existsSync(path.join(dir, f))).length
    const waiting = files.filter((f) => existsSync(path.join(m.config.spoolDir, f))).length
    const stored = files.length - stillBad - waiting
    if (out.json) printJson(out, { retried: files.length, stored, stillBad, waiting })
    else {
      out.stdout(
        `retried ${files.length} file(s): ${stored} stored, ${stillBad} still cannot be stored (back in spool/bad/; mnemo status shows why)${waiting > 0 ? `, ${waiting} waiting in the spool` : ''}\n`,
      )
    }
    if (failed !== undefined)
      out.stderr(`warning: the store refused the spool: ${failed instanceof Error ? failed.message : String(failed)}\n`)
  })
}

/** `mnemo spool purge --yes`: deletes every file of `spool/bad/`, for good. */
export async function spoolPurge(io: CliIo, out: Out, o: GlobalOptions & { yes?: boolean }): Promise<void> {
  await withMnemo(io, o, async (m) => {
    const { bad, dir } = badSpool(m)
    const files = bad.list()
    if (!o.yes)
      throw invalidInput(
        'yes',
        `this deletes the ${files.length} file(s) in ${dir} for good; add --yes to confirm (mnemo spool list shows them)`,
      )
    for (const file of files) bad.remove(file)
    if (out.json) printJson(out, { purged: files.length })
    else out.stdout(`purged ${files.length} file(s) from ${dir}\n`)
  })
}

export async function status(io: CliIo, out: Out, o: GlobalOptions): Promise<void> {
  await withMnemo(io, o, async (m) => {
    const { remoteServer, checkRemote } = await import('../../runtime/remote-server.js')
    const remote = remoteServer(io.env, m.config.home)
    const server = remote ? await checkRemote(remote) : null
    const stats = await m.engine.stats()
    const errors = m.errors.tail(5)
    const derivation = await m.engine.derivation()
    const doc = {
      home: m.config.home,
      database: m.config.dbPath,
      /** Opened read-only: the data directory or database cannot be written by this user (reads work, writes fail). */
      readOnly: m.readOnly,
      ...(m.readOnlyReason !== undefined ? { readOnlyReason: m.readOnlyReason } : {}),
      counts: {
        events: stats.events,
        projects: stats.projects,
        sessions: stats.sessions,
        observations: stats.observations,
        memories: stats.memories,
      },
      /** Recall channels with their weights; `on` false for a weight of 0 or an embedder not configured (the viewer ticks only those on). */
      channels: m.engine.recallChannels(),
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
      `${[
        `data directory  ${doc.home}`,
        `database        ${doc.database} (${(doc.bytes / 1024).toFixed(0)} KiB)${doc.readOnly ? `, opened read-only: ${m.readOnlyReason ?? 'this user cannot write it'}, so captures and changes fail` : ''}`,
        `counts          ${counted(c.events, 'event')} · ${counted(c.projects, 'project')} · ${counted(c.sessions, 'session')} · ${counted(c.observations, 'observation')} · ${counted(c.memories, 'memory', 'memories')}`,
        `recall channels ${doc.channels.map((ch) => `${ch.name} ${ch.on ? ch.weight : 'off'}`).join(' · ')}`,
        `last capture    ${doc.lastCaptureAt ?? 'never'}`,
        `spool           ${doc.spool.pending} pending · ${doc.spool.bad} unreadable (${doc.spool.dir})`,
        ...(server ? [`team server     ${server.url}: ${server.detail}${server.ok ? '' : ' (hooks spool until this is fixed)'}`] : []),
        ...(derivation.stale
          ? [
              `derived rows    made by an older mnemo (derivation ${derivation.derivedWith}; this one makes ${derivation.current}): run mnemo rebuild`,
            ]
          : []),
        `recent errors   ${errors.length === 0 ? 'none' : ''}`,
        ...errors.map((e) => `  ${e.at}  ${e.where}  ${e.code}: ${e.message}`),
      ].join('\n')}\n`,
    )
  })
}

export async function rebuild(io: CliIo, out: Out, o: GlobalOptions): Promise<void> {
  await withMnemo(io, o, async (m) => {
    const r = await m.engine.rebuild()
    if (out.json) printJson(out, r)
    else out.stdout(`rebuilt ${counted(r.observations, 'observation')} from ${counted(r.events, 'event')}\n`)
  })
}

/**
 * `mnemo compact --before <time>`: folds agent capture events older than the
 * time into what they derived (see `MnemoEngine.compact`), then vacuums.
 *
 * @throws {MnemoError} `INVALID_INPUT` — no or a bad `--before`, a `--project` matching several projects.
 */
export async function compact(
  io: CliIo,
  out: Out,
  o: GlobalOptions & { before?: string; project?: string; vacuum?: boolean },
): Promise<void> {
  const before = parseTimeOption('before', o.before)
  if (before === undefined)
    throw invalidInput('before', 'compact needs --before <time>: events older than it are folded (e.g. --before 2026-01-01)')
  await withMnemo(io, o, async (m) => {
    let project: Project | undefined
    if (o.project !== undefined) {
      const projects = await m.engine.resolveProjects(o.project)
      if (projects.length !== 1)
        throw invalidInput('project', `--project ${JSON.stringify(o.project)} matches ${projects.length} projects; give its path`)
      project = projects[0]!
    }
    const r = await m.engine.compact({ before, ...(project ? { project } : {}), vacuum: o.vacuum !== false }, 'cli')
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
        `consolidated ${counted(r.sessions, 'finished session')}: ${counted(r.summaries, 'summary', 'summaries')}, ${counted(r.lessons, 'lesson')}, ${counted(r.procedures, 'procedure version')}, ${counted(r.memories, 'other memory', 'other memories')} ` +
          `(model: ${r.via.llm}, deterministic: ${r.via.deterministic}); archived ${counted(r.archived, 'decayed memory', 'decayed memories')}\n`,
      )
      const f = r.facts
      if (f.created + f.updated + f.unchanged + f.skipped + f.rejected + f.problems.length > 0)
        out.stdout(
          `facts from conversation: ${f.created} created, ${f.updated} updated, ${f.unchanged + f.skipped} already known, ${f.rejected} refused\n`,
        )
      for (const e of r.errors) out.stderr(`warning: model fell back to the deterministic path for ${e}\n`)
      for (const e of f.problems) out.stderr(`warning: ${e}\n`)
    }
  })
}

export async function exportCmd(
  io: CliIo,
  out: Out,
  o: GlobalOptions & { project?: string; format?: string; out?: string; force?: boolean },
): Promise<void> {
  if (o.format === 'markdown' && o.out === undefined) throw invalidInput('out', 'a Markdown export needs --out <folder>')
  await withMnemo(io, o, async (m) => {
    const projects = o.project === undefined ? undefined : await m.engine.resolveProjects(o.project)
    if (projects && projects.length !== 1)
      throw invalidInput('project', `--project ${JSON.stringify(o.project)} matches ${projects.length} projects; give its path`)
    const project = projects?.[0]
    if (o.format === 'markdown') {
      const dir = path.resolve(io.cwd, o.out!)
      if (existsSync(dir) && !statSync(dir).isDirectory())
        throw invalidInput('out', `--out ${JSON.stringify(o.out)} is a file; a Markdown export needs a folder`)
      const files = await m.engine.exportMarkdown(project ? { project } : {})
      // Every file is checked before any is written: a refusal leaves the folder as it was.
      const refused =
        exportTargetError(dir, m.config, true) ??
        [...files.keys()].map((name) => exportTargetError(path.join(dir, name), m.config, o.force === true)).find((e) => e !== undefined)
      if (refused) throw refused
      mkdirSync(dir, { recursive: true })
      for (const [name, text] of files) writeFileSync(path.join(dir, name), text)
      if (out.json) printJson(out, { folder: dir, files: [...files.keys()] })
      else out.stdout(`wrote ${files.size} Markdown file(s) to ${dir}\n`)
      return
    }
    if (o.out === undefined) {
      if (out.json) throw invalidInput('json', '--json cannot be combined with an export to stdout; add --out <file>')
      await m.engine.exportJsonl((line) => out.stdout(`${line}\n`), project ? { project } : {})
      return
    }
    const file = path.resolve(io.cwd, o.out)
    if (existsSync(file) && !statSync(file).isFile())
      throw invalidInput('out', `--out ${JSON.stringify(o.out)} is a folder; give a file name`)
    const refused = exportTargetError(file, m.config, o.force === true)
    if (refused) throw refused
    mkdirSync(path.dirname(file), { recursive: true })
    const tmp = `${file}.tmp-${process.pid}`
    const fd = openSync(tmp, 'w', 0o600)
    let manifest: ExportManifest
    try {
      manifest = await m.engine.exportJsonl((line) => writeSync(fd, `${line}\n`), project ? { project } : {})
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(tmp, file)
    if (out.json) printJson(out, { file, manifest })
    else
      out.stdout(
        `exported ${counted(manifest.counts.events, 'event')}, ${counted(manifest.counts.tombstones, 'tombstone')}, ${counted(manifest.counts.audit, 'audit record')} to ${file}\n`,
      )
  })
}

export async function redact(io: CliIo, out: Out, o: GlobalOptions & { rescan?: boolean }): Promise<void> {
  if (!o.rescan) throw invalidInput('rescan', 'mnemo redact needs --rescan (rewrites stored events in place)')
  await withMnemo(io, o, async (m) => {
    const r = await m.engine.rescanSecrets('cli')
    if (out.json) printJson(out, r)
    else
      out.stdout(
        `redacted ${counted(r.eventsChanged, 'event')}; rebuilt ${counted(r.observations, 'observation')} from ${counted(r.events, 'event')} (audit record written)\n`,
      )
  })
}

/** A reindex stage as people read it: project ids (`builtin prj_…`) replaced by the projects' names. */
export function progressLabel(stage: string, names: ReadonlyMap<string, string>): string {
  return stage.replace(/\bprj_\w+/g, (id) => names.get(id) ?? id)
}

export async function reindex(io: CliIo, out: Out, o: GlobalOptions & { project?: string }): Promise<void> {
  await withMnemo(io, o, async (m) => {
    const ids = await projectIds(m, o.project)
    // Progress names projects as people know them, not by id (`builtin prj_…` → `builtin acme-api`).
    const names = new Map((await m.engine.listProjects()).map((p) => [p.id as string, p.name]))
    let last = ''
    const r = await m.engine.reindex({
      ...(ids ? { projectIds: ids as never } : {}),
      onProgress: (stage, done, total) => {
        const line = `${progressLabel(stage, names)}: ${done}/${total}`
        if (line !== last) io.stderr(`\r${line}`)
        last = line
      },
    })
    if (last) io.stderr('\n')
    if (out.json) printJson(out, r)
    else
      out.stdout(
        `builtin model refitted for ${counted(r.builtinProjects, 'project')}${r.space ? `; ${counted(r.embedded, 'document')} embedded into ${r.space}` : '; no neural embedder configured (MNEMO_EMBEDDER)'}\n`,
      )
  })
}
