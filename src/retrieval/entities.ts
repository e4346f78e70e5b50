import { splitIdentifier } from './search-text.js'

/** Kinds of entity mnemo extracts deterministically (no model). */
export type EntityType = 'file' | 'symbol' | 'url' | 'tool' | 'name'

/** An entity as stored: its type and normalised name (lowercase, trimmed). */
export interface EntityRef {
  type: EntityType
  name: string
}

/** Most entities kept per document; the rest are the least specific. */
export const MAX_ENTITIES_PER_DOC = 24

const URL_RE = /\bhttps?:\/\/[^\s<>"'`)\]]+/g
// A path: at least one slash or a dotted file name with a known-looking extension.
const PATH_RE = /(?:^|[\s(`'"])((?:\.{0,2}\/)?(?:[\w.@-]+\/)+[\w.@-]+|[\w-]+\.(?:ts|tsx|js|jsx|mjs|cjs|py|rb|go|rs|java|kt|c|h|cc|cpp|hpp|cs|php|swift|md|json|ya?ml|toml|sql|sh|css|scss|html|vue|svelte|lock|env|ini|cfg|txt))(?=$|[\s)`'",:;.!?])/g
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
const VOCATIVE = /\b(?:hi|hey|hello|thanks|thank you|bye|dear|congrats|congratulations|sorry|welcome|morning|night|cheers)[,!]?\s*$|(?:^|[.!?]\s*)(?:wow|oh|yes|yeah|yep|sure|okay|ok|great|aw|aww|haha)?[,!]\s*$/i

/** A capitalised run that itself starts with a greeting ("Hi Tom", "Thanks Caroline"). */
const GREETING_START = /^(?:hi|hey|hello|thanks|bye|dear|congrats|welcome|cheers)\s/i

function addName(out: Map<string, EntityRef>, raw: string): void {
  const words = raw.split(/\s+/).filter((w) => !NOT_NAMES.has(w.toLowerCase().replace(/[’']s$/, '')))
  if (words.length === 0) return
  const name = words.join(' ').replace(/[’']s$/, '').toLowerCase()
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
export function extractEntities(text: string, extra: { files?: readonly string[]; tool?: string; speaker?: string } = {}): EntityRef[] {
  const out = new Map<string, EntityRef>()
  const add = (type: EntityType, name: string): void => {
    const n = name.trim().toLowerCase()
    if (n.length >= 2 && n.length <= 300) out.set(`${type}:${n}`, { type, name: n })
  }
  for (const f of extra.files ?? []) add('file', f)
  const sample = text.length > 20_000 ? text.slice(0, 20_000) : text
  for (const m of sample.matchAll(URL_RE)) add('url', m[0].replace(/[.,;:!?]+$/, ''))
  const withoutUrls = sample.replace(URL_RE, ' ')
  // A path that ends a sentence ("see src/app.ts.") or names a folder ("src/middleware/.") keeps neither the dot nor the slash.
  for (const m of withoutUrls.matchAll(PATH_RE)) add('file', m[1]!.replace(/[./]+$/, ''))
  if (extra.tool) add('tool', extra.tool)
  for (const m of withoutUrls.matchAll(SYMBOL_RE)) if (m[1]!.includes('_') || splitIdentifier(m[1]!).length >= 2) add('symbol', m[1]!)
  // Names: skip the speaker prefix of a dialogue turn ("Caroline: …") — the speaker is its own field.
  const prose = extra.speaker && withoutUrls.startsWith(`${extra.speaker}:`) ? withoutUrls.slice(extra.speaker.length + 1) : withoutUrls
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
 * any case ("what did caroline say" names `caroline`).
 *
 * @param knownNames - Lowercase names of the project's `name` entities.
 */
export function queryEntities(query: string, knownNames: Iterable<string>): EntityRef[] {
  const found = new Map(extractEntities(query).map((e) => [`${e.type}:${e.name}`, e]))
  const lower = ` ${query.toLowerCase().replace(/[^\p{L}\p{N}\s'’-]/gu, ' ').replace(/\s+/g, ' ')} `
  for (const name of knownNames) if (name.length >= 3 && lower.includes(` ${name} `)) found.set(`name:${name}`, { type: 'name', name })
  return [...found.values()]
}
