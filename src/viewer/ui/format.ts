/** Formatting helpers: pure, so they are unit-tested in Node. */

/** Bytes as a short human size: `512 B`, `1.5 KiB`, `12.3 MiB`, `2.0 GiB`. */
export function humanBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '—'
  if (bytes < 1024) return `${bytes} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let v = bytes / 1024
  let i = 0
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`
}

/** A count with thousands separators (`12,345`). */
export function humanCount(n: number): string {
  return n.toLocaleString('en-US')
}

const pad = (n: number): string => String(n).padStart(2, '0')

/**
 * A time for a list row, in local time: `14:03:07` when it is today (relative
 * to `now`), `2024-05-01 14:03` otherwise. An unreadable time is returned as is.
 */
export function shortTime(iso: string, now: Date = new Date()): string {
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return iso
  const hms = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
  const sameDay = d.getFullYear() === now.getFullYear() && d.getMonth() === now.getMonth() && d.getDate() === now.getDate()
  return sameDay ? hms : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`
}

/** A full local time: `2024-05-01 14:03:07`. */
export function fullTime(iso: string | null): string {
  if (iso === null) return '—'
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return iso
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
}

/** A local day heading: `2024-05-01`. */
export function dayOf(iso: string): string {
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return iso
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`
}

/** A duration in words: `45 s`, `12 min`, `3 h 5 min`, `2 d`. */
export function humanDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—'
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s} s`
  const min = Math.round(s / 60)
  if (min < 60) return `${min} min`
  const h = Math.floor(min / 60)
  if (h < 48) return min % 60 === 0 ? `${h} h` : `${h} h ${min % 60} min`
  return `${Math.round(h / 24)} d`
}

/** The first line of `text`, whitespace collapsed, cut to `max` characters with an ellipsis. */
/**
 * Bidirectional-text controls (U+202A–U+202E embeddings and overrides,
 * U+2066–U+2069 isolates, U+200E/U+200F/U+061C marks) made visible as
 * `⟨U+202E⟩`: stored text is untrusted, and an override can make
 * `\u202Eexe.png` read as "gnp.exe" (CVE-2021-42574, "Trojan Source").
 */
export function showBidiControls(text: string): string {
  return text.replace(
    /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g,
    (c) => `⟨U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}⟩`,
  )
}

export function oneLine(text: string, max = 240): string {
  const flat = showBidiControls(text).replace(/\s+/g, ' ').trim()
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`
}

/** `name` cut to `max` characters, keeping its end (file paths read best from the end). */
export function shortLabel(name: string, max = 24): string {
  if (name.length <= max) return name
  return `…${name.slice(name.length - (max - 1))}`
}

/** True for a flag that marks suspect text (prompt injection and the like). */
export function isWarningFlag(flag: string): boolean {
  return flag.startsWith('injection') || flag.startsWith('suspect') || flag.startsWith('secret')
}

/** The kind of item an id names, by its prefix. */
export function idType(id: string): 'observation' | 'memory' | 'session' | null {
  if (id.startsWith('obs_')) return 'observation'
  if (id.startsWith('mem_')) return 'memory'
  if (id.startsWith('ses_')) return 'session'
  return null
}

/** `role/tool` for an observation row: `assistant · Bash`, or just the role. */
export function roleTool(role: string, tool: string | null): string {
  return tool === null || tool === '' ? role : `${role} · ${tool}`
}
