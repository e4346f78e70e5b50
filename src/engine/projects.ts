import { existsSync } from 'node:fs'
import path from 'node:path'
import { invalidInput, MnemoError } from '../core/errors.js'
import { requireProject } from '../core/project-arg.js'
import type { ProjectId } from '../core/ids.js'
import type { Project, ProjectRef } from '../core/types.js'
import { namedProject, normalizeRoot, refOf, resolveProjectRoot } from '../capture/project.js'
import type { Store } from '../storage/store.js'
import type { EngineContext } from './engine-context.js'

// Which project a path, a `--project` argument or a client's root names, and which projects a reader is told about.

/**
 * The project a path names, for reads: its git top-level folder when it
 * exists on this machine; otherwise the known project whose root contains
 * it (a folder of a project captured elsewhere); otherwise the path itself.
 * Writes use the identity alone (`resolveProjectRoot`).
 *
 * @param options.workingDir - `p` is where a command or an agent runs (not a path the user named): a folder
 *   on this machine outside any git repository is then its own project, as a hook run there files it, so a
 *   fresh folder never reads the memories of a project that happens to contain it (a home folder, /tmp).
 */
export async function projectForPath(store: Store, p: string, options: { workingDir?: boolean } = {}): Promise<ProjectRef> {
  const ref = resolveProjectRoot(p)
  if (ref.root !== normalizeRoot(p)) return ref
  const projects = await store.listProjects()
  const known = projects.find((pr) => pr.root === ref.root)
  if (known) return { root: known.root, name: known.name }
  if (options.workingDir && existsSync(ref.root)) return ref
  const container = projects.filter((pr) => ref.root.startsWith(`${pr.root}/`)).sort((a, b) => b.root.length - a.root.length)[0]
  return container ? { root: container.root, name: container.name } : ref
}

/**
 * Projects by name. A named user, or an agent under isolation, gets only the projects it has
 * something in (a session or a memory it may see): other users' project names and paths are
 * not listed to them. A reader with no user (the machine's owner, the server token) gets all.
 */
export function listProjects(ctx: Pick<EngineContext, 'store' | 'access'>): Promise<Project[]> {
  const who = ctx.access.who()
  return ctx.store.listProjects(ctx.access.user !== undefined || who.agent !== undefined ? who : {})
}

/**
 * Maps a `--project` argument to project ids: a project name, a root, or
 * any path inside a project (on this machine or as recorded).
 *
 * @throws {MnemoError} `NOT_FOUND` — nothing matches; the hint lists known projects.
 */
export async function resolveProjects(ctx: Pick<EngineContext, 'store' | 'access' | 'cwd'>, arg: string): Promise<Project[]> {
  if (arg.trim() === '') throw invalidInput('project', 'project is empty (give a project name or a path inside it)')
  // Names are matched among the projects this reader has something in (another user's project names are not
  // theirs to learn); a path, the reader's own checkout, among all, so a member's first capture there can be watched.
  const all = await listProjects(ctx)
  const byName = all.filter((p) => p.name === arg || p.root === arg)
  if (byName.length > 0) return byName
  // By location only for a path (relative to this engine's cwd) or an existing
  // folder: an unknown bare word is a typo, not "the project I am in".
  const full = path.resolve(ctx.cwd, arg)
  if (isPathArg(arg) || existsSync(full)) {
    const ref = await projectForPath(ctx.store, full)
    const byRoot = (await ctx.store.listProjects()).filter((p) => p.root === ref.root)
    if (byRoot.length > 0) return byRoot
  }
  const names = all.map((p) => p.name).slice(0, 10)
  throw new MnemoError('NOT_FOUND', `no project named or containing ${JSON.stringify(arg)}`, {
    details: { kind: 'project', id: arg },
    hint: names.length > 0 ? `known projects: ${names.join(', ')}${all.length > 10 ? ', …' : ''}` : 'nothing has been captured yet',
  })
}

/**
 * The project a `--project` argument (or a REST/MCP `project`) means: exactly that project, as hooks
 * run there would file it — an existing project by name or root; else, for a path (relative to the
 * engine's cwd), the project whose root it is (its git top-level folder, outside git the folder itself,
 * never a project that merely contains it); else, for a name, a project of that name that is not a
 * folder (`project:<name>`). A write creates it when new; a read (`create: false`) of an unknown name
 * is an error, while a path may name a folder with nothing captured yet.
 *
 * @param options.create - Default true (a write). False for reads such as the context block.
 * @throws {MnemoError} `INVALID_INPUT` — an empty argument. `NOT_FOUND` — with `create: false`, an unknown name.
 */
export async function projectForWrite(
  ctx: Pick<EngineContext, 'store' | 'access' | 'cwd'>,
  arg: string,
  options: { create?: boolean } = {},
): Promise<ProjectRef> {
  if (arg.trim() === '') throw invalidInput('project', 'project is empty (give a project name or a path inside it)')
  const known = (await listProjects(ctx)).find((p) => p.name === arg || p.root === arg)
  if (known) return { root: known.root, name: known.name }
  // A bare word is a path when it names a folder here, as for reads (resolveProjects).
  if (isPathArg(arg) || existsSync(path.resolve(ctx.cwd, arg))) {
    const ref = resolveProjectRoot(path.resolve(ctx.cwd, arg))
    const same = (await ctx.store.listProjects()).find((p) => p.root === ref.root)
    return same ? { root: same.root, name: same.name } : ref
  }
  if (options.create === false) {
    const [found] = await resolveProjects(ctx, arg)
    return { root: found!.root, name: found!.name }
  }
  const named = namedProject('project', arg)
  const same = (await ctx.store.listProjects()).find((p) => p.root === named.root)
  return same ? { root: same.root, name: same.name } : named
}

/**
 * `requireProject` with the reader's project names in its hint: the names are read only when the project is refused.
 * @throws {MnemoError} `INVALID_INPUT` — as `requireProject`.
 */
export async function requireKnownProject(
  reader: { listProjects(): Promise<readonly { name: string }[]> },
  project: string | undefined,
  howToPass?: string,
): Promise<string> {
  try {
    return requireProject(project, () => [], howToPass)
  } catch (error) {
    if (!MnemoError.is(error, 'INVALID_INPUT')) throw error
    const names = (await reader.listProjects()).map((p) => p.name)
    return requireProject(project, () => names, howToPass)
  }
}

/**
 * The project a client named for a hook event (team mode): its root, which must be absolute and contain `cwd`.
 * @throws {MnemoError} `INVALID_INPUT` — a relative root, or one that does not contain the event's cwd.
 */
export function clientProject(root: string, cwd: string): ProjectRef {
  const r = normalizeRoot(root)
  if (!path.isAbsolute(root)) throw invalidInput('projectRoot', `projectRoot must be an absolute path (got ${JSON.stringify(root)})`)
  const c = normalizeRoot(cwd)
  if (c !== r && !c.startsWith(r.endsWith(path.sep) ? r : r + path.sep))
    throw invalidInput('projectRoot', `projectRoot ${JSON.stringify(root)} does not contain the event's cwd ${JSON.stringify(cwd)}`)
  return refOf(r)
}

/** True when a `--project` argument is written as a path rather than a name. */
function isPathArg(arg: string): boolean {
  return /[\\/]/.test(arg) || arg === '.' || arg === '..'
}

/**
 * Root of the project that holds a user's own memories, the ones that apply in every project (`remember --scope
 * user`): `mnemo-user:<user>` (`mnemo-user:` with no user, the one person of a machine without `MNEMO_USER`). Not a
 * folder, so no hook's working directory ever resolves to it; its memories carry the user, so another user's reads
 * never see them (see `Access`).
 */
const USER_PROJECT_PREFIX = 'mnemo-user:'

/** The project of `user`'s memories that apply in every project; its name is `~user` (`~` with no user). */
export function userProject(user: string | undefined): ProjectRef {
  return { root: `${USER_PROJECT_PREFIX}${user ?? ''}`, name: user === undefined ? '~' : `~${user}` }
}

/** The id of the reader's user project, when it holds anything. */
export async function userProjectId(ctx: Pick<EngineContext, 'store' | 'access'>): Promise<ProjectId | undefined> {
  const root = userProject(ctx.access.user).root
  return (await ctx.store.listProjects(ctx.access.who())).find((p) => p.root === root)?.id
}

/**
 * `projectIds` with the reader's user project added, so a read of a project also finds the user's memories that apply
 * everywhere. An empty list (every project) is left as it is.
 *
 * @param projects - Every project (`store.listProjects()`), when the caller has read them already; the user project is
 *   then looked up there (added when it exists: the reads' user scope still hides what the reader may not see).
 */
export async function withUserProject(
  ctx: Pick<EngineContext, 'store' | 'access'>,
  projectIds: readonly ProjectId[],
  projects?: readonly Project[],
): Promise<ProjectId[]> {
  if (projectIds.length === 0) return []
  const root = userProject(ctx.access.user).root
  const mine = projects ? projects.find((p) => p.root === root)?.id : await userProjectId(ctx)
  return mine === undefined || projectIds.includes(mine) ? [...projectIds] : [...projectIds, mine]
}
