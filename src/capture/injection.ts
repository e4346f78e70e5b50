/**
 * Flags text that reads like instructions aimed at an AI agent rather than
 * content for it: the shapes prompt injections take when they ride in on tool
 * output, fetched pages, files or transcripts. A flag is a signal for the
 * caller (mark, quarantine, warn), never a verdict; the text is not changed.
 *
 * Decisions (each asserted in injection.test.ts):
 * - Structured chat API code (`{ role: 'system', content: '…' }`) is NOT a fake
 *   role marker: it is how every OpenAI/Anthropic example looks. Only chat
 *   template tokens (`<|im_start|>`, `[INST]`, `<<SYS>>`), `<system>` tags and
 *   `System:`/`Assistant:`/`Human:` labels at a line start are. A short XML
 *   element (`<system>GitHub</system>` in a pom.xml) and the harness's own
 *   `<system-reminder>` are not.
 * - `System:` at a line start counts only when the line speaks to someone
 *   (you, must, never, ignore, instructions…): `System: Ubuntu 22.04` is tool
 *   output. `Assistant:` and `Human:` at a line start always count.
 * - mnemo's own block tag (`</mnemo-context>`, `<mnemo-context`) anywhere counts:
 *   stored text has no business closing the block it is injected in (the block
 *   escapes it as well; the flag keeps the text out of the block altogether).
 * - "you are now …" counts only before a role (`a`/`an`/`the`/`my` + noun,
 *   "no longer", "in … mode", DAN): "you are now able to push" and "you are
 *   now logged in" do not; "you are now the owner of" (a hosting notice) does not.
 * - "act as" counts only when addressed: at a line or sentence start, or after
 *   "please", "you must/should/will", "from now on". "nginx will act as a
 *   reverse proxy" does not.
 * - Exfiltration needs a sensitive object. A named secret file (.env, ~/.ssh,
 *   id_rsa, .aws/credentials, .npmrc, .netrc, private key) with an upload verb
 *   counts alone; generic ones (secrets, tokens, API keys, passwords,
 *   credentials, the system prompt, the conversation) need a destination (URL,
 *   e-mail, domain). A negation just before the verb ("never upload the .env")
 *   cancels it. Network commands (curl/wget with a data/upload flag, nc, scp,
 *   rsync) that read a secret file count too; `.pub` keys do not.
 * - Concealment: "do not / don't / never" + tell/inform/notify/alert/mention/
 *   reveal/disclose + the user, "keep this secret/hidden from the user",
 *   "hide this from the user", "the user must not know". "Never show the user
 *   a stack trace" (UX advice) does not count.
 */

export type InjectionReason = 'ignore-instructions' | 'role-override' | 'fake-role-marker' | 'exfiltration' | 'conceal-from-user'

interface InjectionResult {
  flagged: boolean
  /** Stable codes, each at most once, in the order of `INJECTION_REASONS`. */
  reasons: InjectionReason[]
}

/** Every reason code, in the order `detectInjection` reports them. */
export const INJECTION_REASONS: readonly InjectionReason[] = [
  'ignore-instructions',
  'role-override',
  'fake-role-marker',
  'exfiltration',
  'conceal-from-user',
]

interface Rule {
  reason: InjectionReason
  test: (text: string) => boolean
  /**
   * Words (lowercase ASCII) of which the text's lowercase form holds one wherever `test` can pass: a literal its
   * regex requires. The regexes have no `u` flag, so their `i` matches ASCII letters only, and lowercasing keeps an
   * ASCII run whole; a rule without words always runs. Most texts hold none, and `includes` is cheaper than the regex.
   */
  words?: readonly string[]
}

const re =
  (regex: RegExp): ((text: string) => boolean) =>
  (text) =>
    regex.test(text)

const PRIOR = String.raw`(?:previous|prior|above|earlier|preceding|former|original|initial|existing|foregoing|system|developer|safety|given)`
const ORDERS = String.raw`(?:instructions?|prompts?|directions?|directives?|rules|guidelines|guidance|context|messages?|commands?|constraints|orders|programming|restrictions|policies)`
const FILLER = String.raw`(?:all|any|every|each|the|of|your|my|these|those|such|earlier|above|previous|prior)`

const IGNORE_PRIOR = new RegExp(
  String.raw`\b(?:ignore|disregard|forget|override|bypass|abandon)\s+(?:${FILLER}\s+){0,4}${PRIOR}\s+(?:system\s+)?${ORDERS}\b`,
  'i',
)
const IGNORE_ABOVE =
  /\b(?:ignore|disregard|forget)\s+(?:all\s+(?:of\s+)?)?(?:everything\s+)?(?:(?:written|said|stated)\s+)?(?:the\s+)?above(?:\s+(?:and|instructions?|prompts?|text)\b|\s*[.,;:!]|\s*$)/im
const FORGET_TOLD = /\bforget\s+(?:everything|all)\s+(?:you\s+(?:were|have\s+been)\s+(?:told|given)|(?:that\s+)?(?:came\s+)?before)\b/i
const NEW_INSTRUCTIONS = /\b(?:new|updated|revised|real|actual)\s+(?:system\s+)?instructions?\s*:/i
const YOUR_REAL_TASK = /\byour\s+(?:new|real|actual|true)\s+(?:instructions|task|goal|objective|purpose|mission)\s+(?:is|are)\b/i

const YOU_ARE_NOW =
  /\byou\s+are\s+now\s+(?:(?:a|an|the|my|our)\s+(?!(?:owner|member|admin|administrator|collaborator|maintainer|contributor|subscriber|follower|part)\b)[a-z]|no\s+longer\b|in\s+(?:[\w-]+\s+){0,2}mode\b|dan\b|jailbroken\b|unrestricted\b|unfiltered\b|free\s+(?:from|of)\b|acting\s+as\b|going\s+to\s+(?:act|pretend|role-?play|ignore)\b)/i
const NO_LONGER =
  /\byou\s+are\s+no\s+longer\s+(?:an?\s+)?(?:ai|assistant|language\s+model|claude|chatgpt|bound|restricted|limited|required|subject|constrained)\b/i
const ACT_AS =
  /(?:^[ \t>*#-]*|[.!?]\s+|\byou\s+(?:must|should|will|shall|are\s+to|now)\s+|\bplease\s+|\bfrom\s+now\s+on,?\s+)act\s+as\s+(?:if\s+you\b|though\s+you\b|(?:a|an|the|my|dan)\b)/im
const PRETEND = /\bpretend\s+(?:that\s+)?(?:you\s+are|you're|to\s+be)\b/i
const FROM_NOW_ON = /\bfrom\s+now\s+on,?\s+(?:you\s+(?:are|will|must|shall)|act|respond|answer|behave|ignore|only)\b/i
const NEW_ROLE = /\byour\s+new\s+(?:role|persona|name|identity)\s+(?:is|will\s+be)\b/i
const MODE_SWITCH =
  /\b(?:developer|dan|jailbreak|god)\s+mode\s+(?:enabled|activated|on)\b|\benable\s+(?:developer|dan|jailbreak|god)\s+mode\b/i

const CHAT_TOKENS =
  /<\|(?:im_start|im_end|im_sep|system|user|assistant|endoftext|begin_of_text|end_of_text|start_header_id|end_header_id|eot_id|eom_id)\|>/i
const INST_MARKERS = /\[\/?INST\]|<<\/?SYS>>/
/** `<system>`/`</system>` tags, but not a short XML element such as Maven's `<system>GitHub</system>`. */
const SYSTEM_TAG =
  /<\/?(?:system[_-]prompt|im_system)\s*>|<system\s*>(?![^<\n]{0,60}<\/system\s*>)|(?<!<system\s*>[^<\n]{0,60})<\/system\s*>/i
/** mnemo's own context-block tag (context-block.ts): text holding it poses as the end (or start) of the recalled data around it. */
const CONTEXT_TAG = /<\s*\/?\s*mnemo-context\b/i
const ROLE_LABEL = /^[ \t]*(?:#{1,3}[ \t]*)?(?:Assistant|ASSISTANT|Human|HUMAN)[ \t]*:/m
const SYSTEM_LABEL =
  /^[ \t]*(?:#{1,3}[ \t]*)?(?:System|SYSTEM)[ \t]*:(?=[^\r\n]*\b(?:you|your|must|always|never|ignore|instructions?|assistant|do\s+not|don't|respond|reply|override)\b)/im

const NEGATION_BEFORE = /\b(?:never|not|don't|dont|avoid|shouldn't|mustn't|no\s+need\s+to|without)\b[^.!?\n]{0,12}$/i
const SEND_VERB = /\b(?:send|post|upload|exfiltrate|forward|transmit|submit|leak|e-?mail|publish|share|paste|copy|pipe|dump)\b/gi
const STRONG_TARGET =
  /\.env(?![\w.-])|~\/\.ssh|\.ssh\/|\bid_(?:rsa|ed25519|ecdsa|dsa)\b(?!\.pub)|\.aws\/credentials|\.npmrc\b|\.netrc\b|\.git-credentials\b|\bprivate\s+keys?\b|\bssh\s+keys?\b/i
const WEAK_TARGET =
  /\b(?:secrets?|credentials?|api[\s_-]?keys?|tokens?|passwords?|env(?:ironment)?\s+var(?:iable)?s|cookies?|system\s+prompt|conversation|chat\s+history|(?:entire|whole)\s+(?:codebase|repo(?:sitory)?)|contents?\s+of)\b/i
const DESTINATION =
  /\b(?:to|at|into|via)\s+(?:https?:\/\/|ftp:\/\/|[\w.+-]+@[\w-]+\.[\w.]+|(?:[\w-]+\.)+(?:com|net|org|io|xyz|ru|cn|site|top|dev|app|me|co)\b|(?:my|this|the\s+following)\s+(?:server|endpoint|webhook|url))/i

const NET_TOOL = /\b(?:curl|wget|nc|ncat|netcat|scp|rsync|sftp|ftp|Invoke-WebRequest|Invoke-RestMethod)\b/gi
const SECRET_FILE =
  /(?:~|\$HOME|\/home\/[\w.-]+|\/root)?\/?\.ssh\/(?![^\s'"]*\.pub\b)[^\s'"]*|\bid_(?:rsa|ed25519|ecdsa|dsa)\b(?!\.pub)|(?:^|[\s@'"=/<])\.env(?![\w.-])|\.aws\/credentials|\.npmrc\b|\.netrc\b|\.git-credentials\b|\/etc\/(?:passwd|shadow)\b|\.kube\/config\b|\.docker\/config\.json\b/i
const UPLOAD_FLAG = /\s(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form|-T|--upload-file|--post-file|--body-file|-InFile)(?:\s|=|@)/
const PIPE_TO_NET = /\|\s*(?:curl|wget|nc|ncat|netcat)\b/i

/** A send verb, not negated, followed within its sentence by a secret (and, for generic ones, a destination). */
function sendsSecrets(text: string): boolean {
  SEND_VERB.lastIndex = 0
  for (let m = SEND_VERB.exec(text); m; m = SEND_VERB.exec(text)) {
    const before = text.slice(Math.max(0, m.index - 40), m.index)
    if (NEGATION_BEFORE.test(before)) continue
    const after = text.slice(m.index + m[0].length, m.index + m[0].length + 200)
    const end = after.search(/[.!?](?:\s|$)|\n\s*\n/)
    const sentence = end < 0 ? after : after.slice(0, end)
    if (STRONG_TARGET.test(sentence.slice(0, 80))) return true
    if (WEAK_TARGET.test(sentence) && DESTINATION.test(sentence)) return true
  }
  return false
}

/** A network command on one line reading a secret file: `curl -d @~/.ssh/id_rsa`, `cat .env | nc`, `scp ~/.aws/credentials`. */
function networkReadsSecret(text: string): boolean {
  NET_TOOL.lastIndex = 0
  let doneUpTo = -1
  for (let m = NET_TOOL.exec(text); m; m = NET_TOOL.exec(text)) {
    if (m.index < doneUpTo) continue
    const lineStart = text.lastIndexOf('\n', m.index) + 1
    let lineEnd = text.indexOf('\n', m.index)
    if (lineEnd < 0) lineEnd = text.length
    doneUpTo = lineEnd
    NET_TOOL.lastIndex = lineEnd
    const line = text.slice(lineStart, Math.min(lineEnd, lineStart + 2000))
    if (!SECRET_FILE.test(line)) continue
    const tool = m[0].toLowerCase()
    const uploads = tool === 'curl' || tool === 'wget' || tool.startsWith('invoke-') ? UPLOAD_FLAG.test(line) : true
    if (uploads || PIPE_TO_NET.test(line)) return true
  }
  return false
}

const CONCEAL_TELL =
  /\b(?:do\s+not|don't|dont|never|must\s+not|should\s+not)\s+(?:tell|inform|notify|alert|mention|reveal|disclose|report)\s+(?:(?:this|it|that|anything|any\s+of\s+this)\s+)?(?:(?:to|about\s+(?:this|it))\s+)?(?:the\s+)?(?:user|human|operator)\b/i
const CONCEAL_KEEP =
  /\b(?:keep\s+(?:this|it|that)\s+(?:a\s+)?(?:secret|hidden|confidential)\s+from|hide\s+(?:this|it|that)\s+from)\s+(?:the\s+)?(?:user|human|operator)\b/i
const CONCEAL_KNOW =
  /\bthe\s+(?:user|human)\s+(?:must|should|does|need|needs\s+to)\s*(?:not|n't)\s+(?:know|see|notice|find\s+out|be\s+(?:told|informed|aware))\b/i

/** The rules, grouped by reason; the first hit per reason is enough. */
const RULES: readonly Rule[] = [
  { reason: 'ignore-instructions', test: re(IGNORE_PRIOR), words: ['ignore', 'disregard', 'forget', 'override', 'bypass', 'abandon'] },
  { reason: 'ignore-instructions', test: re(IGNORE_ABOVE), words: ['above'] },
  { reason: 'ignore-instructions', test: re(FORGET_TOLD), words: ['forget'] },
  { reason: 'ignore-instructions', test: re(NEW_INSTRUCTIONS), words: ['instruction'] },
  { reason: 'ignore-instructions', test: re(YOUR_REAL_TASK), words: ['your'] },
  { reason: 'role-override', test: re(YOU_ARE_NOW), words: ['now'] },
  { reason: 'role-override', test: re(NO_LONGER), words: ['longer'] },
  { reason: 'role-override', test: re(ACT_AS), words: ['act'] },
  { reason: 'role-override', test: re(PRETEND), words: ['pretend'] },
  { reason: 'role-override', test: re(FROM_NOW_ON), words: ['now'] },
  { reason: 'role-override', test: re(NEW_ROLE), words: ['your'] },
  { reason: 'role-override', test: re(MODE_SWITCH), words: ['mode'] },
  { reason: 'fake-role-marker', test: re(CHAT_TOKENS), words: ['<|'] },
  { reason: 'fake-role-marker', test: re(INST_MARKERS), words: ['inst]', 'sys>>'] },
  { reason: 'fake-role-marker', test: re(SYSTEM_TAG), words: ['system'] },
  { reason: 'fake-role-marker', test: re(ROLE_LABEL), words: ['assistant', 'human'] },
  { reason: 'fake-role-marker', test: re(SYSTEM_LABEL), words: ['system'] },
  { reason: 'fake-role-marker', test: re(CONTEXT_TAG), words: ['mnemo-context'] },
  { reason: 'exfiltration', test: sendsSecrets },
  { reason: 'exfiltration', test: networkReadsSecret },
  { reason: 'conceal-from-user', test: re(CONCEAL_TELL), words: ['user', 'human', 'operator'] },
  { reason: 'conceal-from-user', test: re(CONCEAL_KEEP), words: ['keep', 'hide'] },
  { reason: 'conceal-from-user', test: re(CONCEAL_KNOW), words: ['user', 'human'] },
]

// Zero-width and invisible format characters used to split trigger words.
const INVISIBLE = /[\u00AD\u200B-\u200F\u2060-\u2064\uFEFF]/g

function normalize(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the class is all of ASCII, NUL included
  if (!/[^\x00-\x7F]/.test(text)) return text
  // NFKC folds full-width and compatibility letters (ｉｇｎｏｒｅ) to ASCII.
  return text
    .replace(INVISIBLE, '')
    .normalize('NFKC')
    .replace(/[\u2018\u2019]/g, "'")
}

/**
 * Flags text that reads like instructions aimed at an AI agent. Reasons are
 * stable codes: `ignore-instructions`, `role-override`, `fake-role-marker`,
 * `exfiltration`, `conceal-from-user`. Pure; linear in the text length.
 */
export function detectInjection(text: string): InjectionResult {
  const t = normalize(text)
  const lower = t.toLowerCase()
  const found = new Set<InjectionReason>()
  for (const rule of RULES) {
    if (found.has(rule.reason) || (rule.words !== undefined && !rule.words.some((w) => lower.includes(w)))) continue
    if (rule.test(t)) found.add(rule.reason)
  }
  const reasons = INJECTION_REASONS.filter((r) => found.has(r))
  return { flagged: reasons.length > 0, reasons }
}
