/**
 * Finds the table headers (`[a.b]`, `[[a.b]]`) of a TOML text and the lines
 * each table's own content spans, without a full parse: enough for
 * toml-config.ts to replace one table's lines and keep every other byte.
 */

/** One table header of a TOML text. */
interface TomlHeader {
  /** 0-based line of the header. */
  line: number
  /** Key segments, or undefined when the header could not be read. */
  key: string[] | undefined
  array: boolean
  /** Last line of the table's own content (the header line when it has none); trailing blank and comment lines belong to what follows. */
  end: number
}

const KEY_ESCAPES: Readonly<Record<string, string>> = { b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', '"': '"', '\\': '\\' }

function readTomlKey(src: string): string[] | undefined {
  const out: string[] = []
  let i = 0
  const skip = (): void => {
    while (src[i] === ' ' || src[i] === '\t') i++
  }
  for (;;) {
    skip()
    const c = src[i]
    if (c === '"') {
      let j = i + 1
      let seg = ''
      while (j < src.length && src[j] !== '"') {
        if (src[j] !== '\\') {
          seg += src[j]
          j++
          continue
        }
        const esc = src[j + 1] ?? ''
        if (esc === 'u' || esc === 'U') {
          const len = esc === 'u' ? 4 : 8
          const hex = src.slice(j + 2, j + 2 + len)
          if (hex.length !== len || !/^[0-9A-Fa-f]+$/.test(hex)) return undefined
          seg += String.fromCodePoint(parseInt(hex, 16))
          j += 2 + len
          continue
        }
        const simple = KEY_ESCAPES[esc]
        if (simple === undefined) return undefined
        seg += simple
        j += 2
      }
      if (src[j] !== '"') return undefined
      out.push(seg)
      i = j + 1
    } else if (c === "'") {
      const j = src.indexOf("'", i + 1)
      if (j < 0) return undefined
      out.push(src.slice(i + 1, j))
      i = j + 1
    } else {
      const m = /^[A-Za-z0-9_-]+/.exec(src.slice(i))
      if (m === null) return undefined
      out.push(m[0])
      i += m[0].length
    }
    skip()
    if (i >= src.length) return out
    if (src[i] !== '.') return undefined
    i++
  }
}

const ML_BASIC = '"""'
const ML_LITERAL = "'''"

/**
 * Finds the table headers of a TOML text (split on `\n`; a `\r` before it
 * stays part of the line), skipping anything inside strings, multi-line
 * strings, arrays and inline tables.
 */
export function scanTomlHeaders(lines: readonly string[]): TomlHeader[] {
  const headers: TomlHeader[] = []
  let ml: string | undefined
  let depth = 0
  let lastContent = -1
  const close = (): void => {
    const h = headers[headers.length - 1]
    if (h !== undefined) h.end = Math.max(h.line, lastContent)
  }
  for (const [n, raw] of lines.entries()) {
    const line = raw.replace(/\r$/, '')
    let content = ml !== undefined || depth > 0
    if (ml === undefined && depth === 0) {
      const m = /^[ \t]*(\[\[?)(.*?)(\]\]?)[ \t]*(?:#.*)?$/.exec(line)
      if (m !== null && (m[1] === '[[') === (m[3] === ']]')) {
        close()
        headers.push({ line: n, key: readTomlKey(m[2] ?? ''), array: m[1] === '[[', end: n })
        lastContent = n
        continue
      }
    }
    let i = 0
    while (i < line.length) {
      if (ml !== undefined) {
        const j = line.indexOf(ml, i)
        if (j < 0) break
        if (ml === ML_BASIC) {
          let back = 0
          for (let k = j - 1; k >= i && line[k] === '\\'; k--) back++
          if (back % 2 === 1) {
            i = j + 1
            continue
          }
        }
        i = j + 3
        while (line[i] === ml[0]) i++ // up to two more quotes belong to the string
        ml = undefined
        continue
      }
      const c = line[i]
      if (c === '#') break
      if (c !== ' ' && c !== '\t') content = true
      if (line.startsWith(ML_BASIC, i) || line.startsWith(ML_LITERAL, i)) {
        ml = line.startsWith(ML_BASIC, i) ? ML_BASIC : ML_LITERAL
        i += 3
        continue
      }
      if (c === '"') {
        let j = i + 1
        while (j < line.length && line[j] !== '"') j += line[j] === '\\' ? 2 : 1
        i = j + 1
        continue
      }
      if (c === "'") {
        const j = line.indexOf("'", i + 1)
        i = j < 0 ? line.length : j + 1
        continue
      }
      if (c === '[' || c === '{') depth++
      else if (c === ']' || c === '}') depth = Math.max(0, depth - 1)
      i++
    }
    if (content) lastContent = n
  }
  close()
  return headers
}
