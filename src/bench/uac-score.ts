/**
 * The User-as-Code analytical benchmark's scorer, as published (Bojie Li, "User as Code", arXiv:2606.16707;
 * described in the dataset's README, `../shared/datasets/uac-analytical/README.md`): deterministic, no judge.
 * - `int`: the whole answer if it is an integer (commas removed), else the last integer in it; exact match.
 * - `float`: `,` `$` `USD` stripped; the whole answer or the last number; correct within max(1% of |gold|, 0.01).
 * - `string`: lower-cased and trimmed; equal, or either contains the other; an empty gold matches only an empty answer.
 * - `set`: a JSON / Python list literal, else split on `,` `;` newline after stripping brackets and quotes; elements
 *   lower-cased and trimmed, compared as sets. An empty gold also accepts an answer containing "none", "no ", "empty", "no item".
 * - `list`: the same parse, compared in order.
 */
export type UacAnswerKind = 'int' | 'float' | 'string' | 'set' | 'list'

/** Whether `prediction` scores as correct against `gold` under the published rules for `kind`. */
export function scoreUac(kind: UacAnswerKind, prediction: string, gold: unknown): boolean {
  const pred = prediction.trim()
  switch (kind) {
    case 'int': {
      const whole = pred.replace(/,/g, '')
      const n = /^-?\d+$/.test(whole) ? Number(whole) : lastMatch(whole, /-?\d+/g)
      return n !== undefined && n === Number(gold)
    }
    case 'float': {
      const clean = pred.replace(/,|\$|USD/g, '').trim()
      const n = /^-?\d+(\.\d+)?$/.test(clean) ? Number(clean) : lastMatch(clean, /-?\d+(?:\.\d+)?/g)
      if (n === undefined) return false
      const g = Number(gold)
      return Math.abs(n - g) <= Math.max(0.01 * Math.abs(g), 0.01)
    }
    case 'string': {
      const p = pred.toLowerCase()
      const g = String(gold).trim().toLowerCase()
      if (g === '') return p === ''
      return p === g || p.includes(g) || (p.length > 0 && g.includes(p))
    }
    case 'set':
    case 'list': {
      const goldItems = (gold as unknown[]).map((x) => String(x).trim().toLowerCase())
      if (goldItems.length === 0) {
        const low = pred.toLowerCase()
        if (['none', 'no ', 'empty', 'no item'].some((w) => low.includes(w))) return true
      }
      const items = parseList(pred)
      if (kind === 'list') return items.length === goldItems.length && items.every((x, i) => x === goldItems[i])
      const a = new Set(items)
      const b = new Set(goldItems)
      return a.size === b.size && [...a].every((x) => b.has(x))
    }
  }
}

function lastMatch(text: string, re: RegExp): number | undefined {
  const all = text.match(re)
  return all && all.length > 0 ? Number(all[all.length - 1]) : undefined
}

function parseList(text: string): string[] {
  const t = text.trim()
  try {
    // JSON, or a Python literal with single quotes.
    const parsed = JSON.parse(t.startsWith('[') ? t.replace(/'/g, '"') : t) as unknown
    if (Array.isArray(parsed)) return parsed.map((x) => String(x).trim().toLowerCase()).filter((x) => x.length > 0)
  } catch {
    // not a literal: split below
  }
  return t
    .replace(/^[[(]|[\])]$/g, '')
    .split(/[,;\n]/)
    .map((x) => x.replace(/^["'\s]+|["'\s]+$/g, '').toLowerCase())
    .filter((x) => x.length > 0)
}
