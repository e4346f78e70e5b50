/**
 * What agents wrap around the words mnemo captures, and how capture takes it off again:
 *
 * - mnemo's own blocks (`<mnemo-context …>…</mnemo-context>` at session start, and any other
 *   `<mnemo-…>` element mnemo injects) come back inside the next prompt or transcript. They are
 *   never anybody's words: {@link stripOwnBlocks} removes them in every form an agent passes them
 *   on in, raw or HTML-escaped (`&lt;mnemo-context …&gt;`, Gemini CLI's `<hook_context>`), once or
 *   twice (`&amp;lt;`), nested or cut off.
 * - Hook output an agent puts into the user's turn is not the user's words either
 *   ({@link userWords}): Gemini CLI's `<hook_context>…</hook_context>` (gemini-cli
 *   `client.ts`: `<hook_context>${additionalContext}</hook_context>`), Claude Code's
 *   `<user-prompt-submit-hook>`, and any wrapper (`<system-reminder>`, …) around a mnemo block.
 * - Tool output wrappers ({@link unwrapToolOutput}): Claude Code's `<system-reminder>` notes appended to a
 *   result, Gemini CLI's `<untrusted_context>` (with its
 *   escaped closing tag `&lt;/untrusted_context&gt;` inside) and its shell tool's sections
 *   (`Output: …`, `Process Group PGID: N`, `Background PIDs: …`), and Codex CLI's exec header
 *   (`Chunk ID: …`, `Wall time: … seconds`, `Process exited with code N`, `Original token count: N`,
 *   `Output:`). What the tool printed, an error and a non-zero exit status are kept.
 *
 * Pure string functions, linear in the text length; text without any wrapper comes back as is.
 */

/** `<` as agents pass it on: raw, HTML-escaped once or twice, or as a JSON/JS escape. */
const LT = String.raw`(?:<|&lt;|&amp;lt;|&#0*60;|&#x0*3c;|\\u003c)`
/** `>` likewise. */
const GT = String.raw`(?:>|&gt;|&amp;gt;|&#0*62;|&#x0*3e;|\\u003e)`
/** An opening or closing tag of a mnemo element: group 1 is `/` for a closing tag, group 2 the name. */
const OWN_TAG = new RegExp(String.raw`${LT}\s*(\/?)\s*(mnemo-[a-z][a-z0-9-]*)(?=[\s/]|${GT})`, 'gi')
/** Quick test before the scan (most text has no mnemo tag at all). */
const OWN_TAG_HINT = /mnemo-[a-z]/i

/**
 * `text` without mnemo's own blocks. A block runs from its opening tag to the first closing tag
 * of the same name after it: text mnemo quotes inside a block is cut to one line, so a tag quoted
 * there is an opening whose closing was cut off, never a whole inner block. A tag without its
 * pair (a prompt that talks about `</mnemo-context>`) is text, left as it is: the context block
 * escapes it. Blank lines a block leaves are squeezed to one.
 */
export function stripOwnBlocks(text: string): string {
  if (!OWN_TAG_HINT.test(text)) return text
  const tags = [...text.matchAll(OWN_TAG)]
  let out = ''
  let last = 0
  let i = 0
  while (i < tags.length) {
    const open = tags[i]!
    const name = open[2]!.toLowerCase()
    let j = i + 1
    while (j < tags.length && !(tags[j]![1] === '/' && tags[j]![2]!.toLowerCase() === name)) j++
    if (open[1] === '/' || j >= tags.length) {
      i++
      continue
    }
    out += text.slice(last, open.index)
    last = skipTagRest(text, tags[j]!.index + tags[j]![0].length)
    i = j + 1
  }
  if (last === 0) return text
  out += text.slice(last)
  return out.replace(/\n[ \t]*\n(?:[ \t]*\n)+/g, '\n\n')
}

/** The index just past the rest of a tag (attributes, the closing `>` in any escape form), or `from` when none follows on the line. */
function skipTagRest(text: string, from: number): number {
  const m = new RegExp(String.raw`^[^<>\n&\\]{0,400}?${GT}`, 'i').exec(text.slice(from, from + 420))
  return m ? from + m[0].length : from
}

/** Wrappers an agent puts hook output in; their content is never the user's words. */
const HOOK_WRAPPERS = ['hook_context', 'user-prompt-submit-hook']
/** Wrappers that are dropped when what they hold is a mnemo block. */
const OTHER_WRAPPERS = ['system-reminder', 'system_reminder', 'additional_context', 'hook_prompt', 'context']

/** A wrapper element, raw (`<name>…</name>`, tried first: agents escape what they wrap) or in any escape form. */
function wrapperRegexes(name: string): RegExp[] {
  return [
    new RegExp(String.raw`<\s*${name}\b[^<>]{0,200}>([\s\S]*?)(?:<\s*\/\s*${name}\s*>|$)`, 'gi'),
    new RegExp(String.raw`${LT}\s*${name}\b[^<>]{0,200}?${GT}([\s\S]*?)(?:${LT}\s*\/\s*${name}\s*${GT}|$)`, 'gi'),
  ]
}
const HOOK_WRAPPER_RES = HOOK_WRAPPERS.flatMap(wrapperRegexes)
const OTHER_WRAPPER_RES = OTHER_WRAPPERS.flatMap(wrapperRegexes)
const WRAPPER_HINT = /hook_context|user-prompt-submit-hook|mnemo-[a-z]/i

/**
 * The user's own words in a prompt an agent passed on: hook output wrappers removed
 * (see the module note), then mnemo's blocks, then surrounding blank space. Empty when the
 * prompt held nothing else.
 */
export function userWords(text: string): string {
  if (!WRAPPER_HINT.test(text)) return text
  let out = text
  for (const re of HOOK_WRAPPER_RES) out = out.replace(re, '')
  if (OWN_TAG_HINT.test(out)) {
    for (const re of OTHER_WRAPPER_RES)
      out = out.replace(re, (whole: string, inner: string) =>
        OWN_TAG_HINT.test(inner) && stripOwnBlocks(inner).trim() === '' ? '' : whole,
      )
    out = stripOwnBlocks(out)
  }
  return out.trim() === '' ? '' : out.replace(/^\s*\n/, '').trimEnd()
}

const SYSTEM_REMINDER = /\n*<system-reminder>[\s\S]*?<\/system-reminder>\n*/g
const UNTRUSTED = /^\s*<untrusted_context[^>]*>\n?([\s\S]*?)\n?<\/untrusted_context>\s*$/
/** Gemini CLI's shell tool result sections (gemini-cli `shell.ts`), one per line start. */
const GEMINI_SECTION = /^(Output|Error|Exit Code|Signal|Background PIDs|Process Group PGID): /m
/** Codex CLI's exec header lines, before `Output:` (codex-rs unified exec). */
const CODEX_HEADER_LINE =
  /^(?:Chunk ID: \S+|Wall time: [\d.]+ seconds?|Process exited with code (-?\d+)|Exit code: (-?\d+)|Original token count: \d+|Total output lines: \d+|Process running with session ID \S+)$/

/**
 * A tool result string without the wrappers agents add around what the tool printed (see the
 * module note). Gemini's `Output: (empty)` becomes empty; a non-zero exit is kept as
 * `Exit Code: N` (Gemini) or `Exit code: N` (Codex).
 */
export function unwrapToolOutput(text: string): string {
  let out = text
  const untrusted = UNTRUSTED.exec(out)
  if (untrusted) out = untrusted[1]!.replaceAll('&lt;/untrusted_context&gt;', '</untrusted_context>')
  for (const re of HOOK_WRAPPER_RES) if (out.includes('hook_context')) out = out.replace(re, '')
  // Claude Code appends its own reminders to tool results (a Read result's malware notice): harness text, not output.
  if (out.includes('<system-reminder>')) out = out.replace(SYSTEM_REMINDER, '')
  out = unwrapCodexExec(out)
  if (out.startsWith('Output: ') && /^(?:Process Group PGID|Background PIDs|Exit Code|Error|Signal): /m.test(out))
    out = unwrapGeminiShell(out)
  return out === text ? text : out.replace(/^\s*\n/, '').trimEnd()
}

function unwrapGeminiShell(text: string): string {
  const parts = text.split(GEMINI_SECTION)
  const kept: string[] = []
  if (parts[0]!.trim()) kept.push(parts[0]!.trim())
  for (let i = 1; i < parts.length; i += 2) {
    const name = parts[i]!
    const body = (parts[i + 1] ?? '').replace(/\n$/, '')
    if (name === 'Output') {
      if (body.trim() !== '(empty)') kept.push(body)
    } else if (name === 'Error' || name === 'Exit Code' || name === 'Signal') kept.push(`${name}: ${body.trim()}`)
  }
  return kept.join('\n')
}

function unwrapCodexExec(text: string): string {
  if (
    !text.startsWith('Chunk ID: ') &&
    !text.startsWith('Wall time: ') &&
    !text.startsWith('Exit code: ') &&
    !text.startsWith('Process exited')
  )
    return text
  const lines = text.split('\n')
  let exit: string | undefined
  let sawWallTime = false
  let i = 0
  for (; i < lines.length; i++) {
    const m = CODEX_HEADER_LINE.exec(lines[i]!)
    if (!m) break
    if (lines[i]!.startsWith('Wall time')) sawWallTime = true
    exit = m[1] ?? m[2] ?? exit
  }
  if (!sawWallTime || lines[i] !== 'Output:') return text
  const body = lines.slice(i + 1).join('\n')
  return exit !== undefined && exit !== '0' ? `Exit code: ${exit}\n${body}` : body
}
