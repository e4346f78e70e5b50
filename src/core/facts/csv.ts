import { invalidInput } from '../errors.js'

/**
 * Parses CSV text (RFC 4180: comma-separated, `"`-quoted fields with `""` for a quote, CRLF or LF line ends) into
 * records keyed by the header row. Blank lines are skipped. Values stay text.
 *
 * @param file - How errors name the input.
 * @returns Records with their 1-based line number.
 * @throws {MnemoError} `INVALID_INPUT` (path `<file>:<line>`) — an unclosed quote, or a row with more cells than the header.
 */
export function parseCsv(text: string, file: string): { line: number; record: Record<string, string> }[] {
  const rows: { line: number; cells: string[] }[] = []
  let cells: string[] = []
  let cell = ''
  let quoted = false
  let line = 1
  let rowLine = 1
  let i = 0
  const endRow = (): void => {
    cells.push(cell)
    if (!(cells.length === 1 && cells[0] === '')) rows.push({ line: rowLine, cells })
    cells = []
    cell = ''
  }
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  while (i < src.length) {
    const ch = src[i]!
    if (quoted) {
      if (ch === '"' && src[i + 1] === '"') {
        cell += '"'
        i += 2
        continue
      }
      if (ch === '"') quoted = false
      else {
        if (ch === '\n') line++
        cell += ch
      }
      i++
      continue
    }
    if (ch === '"' && cell === '') quoted = true
    else if (ch === ',') {
      cells.push(cell)
      cell = ''
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && src[i + 1] === '\n') i++
      endRow()
      line++
      rowLine = line
    } else cell += ch
    i++
  }
  if (quoted) throw invalidInput(`${file}:${rowLine}`, `${file} line ${rowLine}: a quoted field is not closed`)
  if (cell !== '' || cells.length > 0) endRow()
  const header = rows.shift()
  if (header === undefined) return []
  const names = header.cells.map((h) => h.trim())
  return rows.map((r) => {
    if (r.cells.length > names.length)
      throw invalidInput(`${file}:${r.line}`, `${file} line ${r.line}: ${r.cells.length} cells, but the header names ${names.length}`)
    const record: Record<string, string> = {}
    names.forEach((n, j) => {
      record[n] = (r.cells[j] ?? '').trim()
    })
    return { line: r.line, record }
  })
}
