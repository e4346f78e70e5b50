import type { EntityRef, EntityType } from '../core/types.js'
import { isAscii, splitIdentifier } from './search-text.js'

/** Most entities kept per document; the rest are the least specific. */
const MAX_ENTITIES_PER_DOC = 24

const URL_RE = /\bhttps?:\/\/[^\s<>"'`)\]]+/g
// A path candidate: at least one slash or a dotted file name with a known-looking extension. `looksLikePath` then
// keeps only path shapes: `pct/100`, `a/b`, `and/or`, `km/h`, `12/05/2023` have a slash and are not files.
const PATH_RE =
  /(?:^|[\s(`'"])((?:~?\/|\.{1,2}\/)?(?:[\w.@-]+\/)+[\w.@-]*|[\w-]+\.(?:ts|tsx|js|jsx|mjs|cjs|py|rb|go|rs|java|kt|c|h|cc|cpp|hpp|cs|php|swift|md|json|ya?ml|toml|sql|sh|css|scss|html|vue|svelte|lock|env|ini|cfg|txt))(?=$|[\s)`'",:;.!?])/g
/** The last segment has an extension: a stem of two or more characters, a dot, then 1–8 letters or digits starting with a letter. */
const EXTENSION = /(?:^|\/)[^/]*[^/.][^/]*\.[A-Za-z][A-Za-z0-9]{0,7}$/
/** Files without an extension that projects commonly hold. */
const EXTENSIONLESS_FILES =
  /(?:^|\/)(?:Makefile|Dockerfile|Containerfile|Gemfile|Rakefile|Procfile|Jenkinsfile|Vagrantfile|Brewfile|LICENSE|README|CODEOWNERS|\.\w[\w.-]*)$/

/**
 * Whether a slash-holding candidate from text is a path: rooted (`/`, `~/`,
 * `./`, `../`), ending in an extension or a known extensionless file name
 * (`docker/Dockerfile`, `config/.env`), naming a folder (`src/middleware/`),
 * or three segments or more that all hold a letter (`src/lib/utils`).
 * Arithmetic and word pairs (`pct/100`, `a/b`, `and/or`, dates) are not.
 */
function looksLikePath(candidate: string): boolean {
  if (!candidate.includes('/')) return true // a dotted file name with a known extension (PATH_RE's second form)
  if (/^(?:~?\/|\.{1,2}\/)/.test(candidate)) return /[A-Za-z]/.test(candidate)
  if (candidate.endsWith('/'))
    return candidate
      .slice(0, -1)
      .split('/')
      .every((seg) => /[A-Za-z]{2}/.test(seg))
  if (EXTENSION.test(candidate) || EXTENSIONLESS_FILES.test(candidate)) return true
  const segments = candidate.split('/')
  return segments.length >= 3 && segments.every((seg) => /[A-Za-z]/.test(seg))
}

/**
 * The name a file entity is stored and looked up under: case kept (paths are
 * case-sensitive), trailing `/` or `.` and leading `./` dropped, and a path
 * inside `projectRoot` made relative to it, so `/home/me/app/src/Cart.ts`,
 * `./src/Cart.ts` and `src/Cart.ts` are one entity of the project at
 * `/home/me/app`. Capture (the event's project root) and recall (the roots of
 * the projects searched) both name files through it.
 *
 * @param projectRoot - Absolute root of the project; other roots (`locomo:…`) leave paths as they are.
 */
export function fileEntityName(path: string, projectRoot?: string): string {
  let name = normalizeSegments(path.trim()).replace(/(?<=.)[./]+$/, '')
  while (name.startsWith('./')) name = name.slice(2)
  const root = projectRoot?.replace(/\/+$/, '')
  if (root?.startsWith('/') && name.length > root.length + 1 && name.startsWith(`${root}/`)) name = name.slice(root.length + 1)
  return name
}

/**
 * `//` collapsed and `.` / `..` segments resolved, as POSIX `path.normalize` does (`src//a/../Cart.ts` →
 * `src/Cart.ts`); a `..` above the start of a relative path is kept, one above `/` is dropped.
 */
function normalizeSegments(p: string): string {
  if (!p.includes('/')) return p
  const absolute = p.startsWith('/')
  const out: string[] = []
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue
    if (seg === '..' && out.length > 0 && out.at(-1) !== '..') out.pop()
    else if (seg !== '..' || !absolute) out.push(seg)
  }
  const joined = out.join('/')
  return absolute ? `/${joined}` : p.startsWith('./') ? `./${joined}` : joined
}

/** A URL with its scheme and host lowercased (they are case-insensitive) and the rest as written. */
function urlEntityName(url: string): string {
  return url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, (origin) => origin.toLowerCase())
}
// camelCase / PascalCase with an inner capital, snake_case with an underscore, or a call `name(`.
const SYMBOL_RE = /\b([a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+)\b/g
// Capitalised word runs ("Sara Bareilles", "Becoming Nicole", "LGBTQ", "Sweden").
const NAME_RE = /\b([A-Z][\p{L}'’-]*[\p{Ll}\d][\p{L}'’-]*|[A-Z]{2,}[+]?)(?:\s+(?:(?:of|de|van|von|the)\s+)?([A-Z][\p{L}'’-]+))*/gu

/** Capitalised words that are capitalised for grammar, not because they name something. */
const NOT_NAMES = new Set(
  (
    'i im i’m ive i’ve id i’d ill i’ll a an the this that these those it its it’s he she we you they my your our their his her ' +
    'yes yeah yep no nope ok okay oh wow hey hi hello thanks thank sure well so and but or if when what where who why how which ' +
    'there here then now just also maybe hmm haha lol great good nice awesome cool sounds that’s thats let’s lets cant can’t ' +
    'dont don’t do did does is are was were be been have has had will would could should may might must can ' +
    'monday tuesday wednesday thursday friday saturday sunday january february march april june july august september october november december ' +
    'error warning note todo fixme true false null undefined none ' +
    // The same contractions with a straight apostrophe, and the word secrets are replaced by.
    "i'm i've i'd i'll it's that's let's can't don't redacted"
  ).split(' '),
)

/** Roles of agents and tools, which are not people. */
const AGENT_ROLES = new Set(['user', 'assistant', 'system', 'tool', 'subagent', 'developer'])

/** Words after which a name is a form of address. */
const VOCATIVE =
  /\b(?:hi|hey|hello|thanks|thank you|bye|dear|congrats|congratulations|sorry|welcome|morning|night|cheers)[,!]?\s*$|(?:^|[.!?]\s*)(?:wow|oh|yes|yeah|yep|sure|okay|ok|great|aw|aww|haha)?[,!]\s*$/i

/** A capitalised run that itself starts with a greeting ("Hi Tom", "Thanks Caroline"). */
const GREETING_START = /^(?:hi|hey|hello|thanks|bye|dear|congrats|welcome|cheers)\s/i

function addName(out: Map<string, EntityRef>, raw: string): void {
  const words = raw.split(/\s+/).filter((w) => !NOT_NAMES.has(w.toLowerCase().replace(/[’']s$/, '')))
  if (words.length === 0) return
  const name = words
    .join(' ')
    .replace(/[’']s$/, '')
    .toLowerCase()
  if (name.length < 2) return
  out.set(`name:${name}`, { type: 'name', name })
}

/**
 * Extracts entities from a document, deterministically: file paths (from the
 * tool input and paths written in text), code symbols (camelCase,
 * PascalCase, snake_case), URLs, the tool name, and capitalised names
 * (people, places, organisations, titles: untyped, `name`). Capitalised
 * grammar words (sentence starts, "I", weekdays) are not names.
 *
 * @returns Unique entities, at most `MAX_ENTITIES_PER_DOC`, paths and URLs first.
 */
export function extractEntities(
  text: string,
  extra: { files?: readonly string[]; tool?: string; speaker?: string; projectRoot?: string } = {},
): EntityRef[] {
  const out = new Map<string, EntityRef>()
  const add = (type: EntityType, name: string): void => {
    const trimmed = name.trim()
    const n = type === 'file' ? fileEntityName(trimmed, extra.projectRoot) : type === 'url' ? urlEntityName(trimmed) : trimmed.toLowerCase()
    if (n.length >= 2 && n.length <= 300) out.set(`${type}:${n}`, { type, name: n })
  }
  for (const f of extra.files ?? []) add('file', f)
  // A relative path in the text that names one of the document's own files (`a.ts`, `../src/a.ts` for
  // `/repo/src/a.ts`, written from the agent's working directory) is that file, not a file at the project root.
  const own = (extra.files ?? []).map((f) => fileEntityName(f, extra.projectRoot))
  const asOwn = (candidate: string): string => {
    if (candidate.startsWith('/') || own.length === 0) return candidate
    const tail = candidate.replace(/^(?:\.{1,2}\/)+/, '')
    return own.find((f) => f === tail || f.endsWith(`/${tail}`)) ?? candidate
  }
  const sample = text.length > 20_000 ? text.slice(0, 20_000) : text
  for (const m of sample.matchAll(URL_RE)) add('url', m[0].replace(/[.,;:!?]+$/, ''))
  const withoutUrls = sample.replace(URL_RE, ' ')
  // A path that ends a sentence ("see src/app.ts.") or names a folder ("src/middleware/.") keeps neither the dot nor the slash.
  let withoutPaths = ''
  let from = 0
  for (const m of withoutUrls.matchAll(PATH_RE)) {
    const candidate = m[1]!.replace(/\.+$/, '')
    if (!looksLikePath(candidate)) continue
    add('file', asOwn(candidate))
    const start = m.index + m[0].length - m[1]!.length
    withoutPaths += `${withoutUrls.slice(from, start)} `
    from = start + candidate.length
  }
  withoutPaths += withoutUrls.slice(from)
  if (extra.tool) add('tool', extra.tool)
  // A symbol seen before is in `out` already, where it first came.
  const symbols = new Set<string>()
  for (const m of withoutUrls.matchAll(SYMBOL_RE)) {
    const symbol = m[1]!
    if (symbols.has(symbol)) continue
    symbols.add(symbol)
    if (symbol.includes('_') || splitIdentifier(symbol).length >= 2) add('symbol', symbol)
  }
  // Names: skip the speaker prefix of a dialogue turn ("Caroline: …") — the speaker is its own field. A capitalised
  // word inside a path (`src/Cart.ts`, `README.md`) is not a name.
  const prose = extra.speaker && withoutPaths.startsWith(`${extra.speaker}:`) ? withoutPaths.slice(extra.speaker.length + 1) : withoutPaths
  // A dialogue turn is about its speaker: the speaker is an entity of the turn (agents' own roles are not names).
  if (extra.speaker && !AGENT_ROLES.has(extra.speaker.toLowerCase())) add('name', extra.speaker)
  for (const m of prose.matchAll(NAME_RE)) {
    // A name someone is addressed by ("Hi Tomasz!", "Thanks, Caroline") is not what the turn is about.
    if (VOCATIVE.test(prose.slice(Math.max(0, m.index - 16), m.index)) || GREETING_START.test(m[0])) continue
    // One capitalised word opening a sentence is grammar ("Edit the file"), unless it is an acronym.
    const before = prose.slice(Math.max(0, m.index - 3), m.index)
    const opensSentence = m.index === 0 || /[.!?:\n]\s*$/.test(before) || /^\s*$/.test(prose.slice(0, m.index))
    if (opensSentence && !/\s/.test(m[0]) && !/^[A-Z]{2,}/.test(m[0])) continue
    addName(out, m[0])
  }
  return [...out.values()].slice(0, MAX_ENTITIES_PER_DOC)
}

/**
 * Entities a query names. The same extraction as for documents, plus every
 * known entity name of the project that the query contains as a phrase in
 * any case ("what did caroline say" names `caroline`). A file path inside
 * one of `projectRoots` is named as capture names it there: relative to the
 * root (`fileEntityName`).
 *
 * @param knownNames - Lowercase names of the project's `name` entities.
 * @param projectRoots - Roots of the projects searched; default none (paths as written).
 */
export function queryEntities(query: string, knownNames: Iterable<string>, projectRoots: readonly string[] = []): EntityRef[] {
  const found = new Map<string, EntityRef>()
  for (const e of extractEntities(query)) {
    found.set(`${e.type}:${e.name}`, e)
    if (e.type !== 'file') continue
    for (const root of projectRoots) {
      const name = fileEntityName(e.name, root)
      if (name !== e.name) found.set(`file:${name}`, { type: 'file', name })
    }
  }
  const folded = query.toLowerCase()
  // ASCII text the same way without the Unicode property classes (compiling them costs ~1 ms: see isAscii).
  const lower = ` ${folded.replace(isAscii(folded) ? /[^A-Za-z0-9\s'-]/g : /[^\p{L}\p{N}\s'’-]/gu, ' ').replace(/\s+/g, ' ')} `
  for (const name of knownNames) if (name.length >= 3 && lower.includes(` ${name} `)) found.set(`name:${name}`, { type: 'name', name })
  return [...found.values()]
}
