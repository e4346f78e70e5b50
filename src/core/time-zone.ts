/**
 * The machine's time zone without ICU's date formatter. The first `Intl.DateTimeFormat` a process makes costs ~11 ms
 * of CPU (ICU loads its calendar and pattern data), more than a hook's whole capture work; a hook that only needs
 * the zone's name and the calendar date of a few instants in it can get both from the operating system and from
 * `Date`'s local-time getters, which V8 computes with the same zone (ICU's host detection: `TZ`, then
 * `/etc/localtime`).
 */
import { readlinkSync } from 'node:fs'

/** Names of zones that are UTC all year (IANA tz database `backward` and `etcetera` files). */
const UTC_NAMES = new Set([
  'UTC',
  'Etc/UTC',
  'Etc/UCT',
  'UCT',
  'Etc/Universal',
  'Universal',
  'Etc/Zulu',
  'Zulu',
  'Etc/GMT',
  'GMT',
  'Etc/Greenwich',
  'Greenwich',
  'Etc/GMT0',
  'GMT0',
  'Etc/GMT+0',
  'Etc/GMT-0',
  'GMT+0',
  'GMT-0',
])

/** An IANA zone name as the tz database spells them (`Europe/Paris`, `America/Argentina/Buenos_Aires`, `Etc/GMT+5`). */
const IANA_NAME = /^[A-Za-z][A-Za-z_-]*(?:\/[A-Za-z0-9][A-Za-z0-9_+-]*)+$/

/** The zone name in a path into a zoneinfo tree (`/usr/share/zoneinfo/Europe/Paris` → `Europe/Paris`), if any. */
function zoneOfPath(p: string): string | undefined {
  const at = p.lastIndexOf('zoneinfo/')
  if (at < 0) return undefined
  const name = p.slice(at + 'zoneinfo/'.length)
  return IANA_NAME.test(name) || UTC_NAMES.has(name) ? name : undefined
}

/**
 * The zone this process's `Date` local time is in, named as the OS names it, read the way ICU detects it on Linux and
 * macOS: `TZ` when it holds an IANA name (`:Name` too) or a path into a zoneinfo tree, else the target of the
 * `/etc/localtime` link. Undefined when neither says (a POSIX rule string in `TZ` such as `CET-1CEST`, a copied
 * rather than linked `/etc/localtime`, Windows): ask `Intl` then.
 *
 * @param env - Only `TZ` is read.
 */
export function osTimeZone(env: Readonly<Record<string, string | undefined>> = process.env): string | undefined {
  let tz = env['TZ']
  if (tz !== undefined && tz !== '') {
    if (tz.startsWith(':')) tz = tz.slice(1)
    if (UTC_NAMES.has(tz) || IANA_NAME.test(tz)) return tz
    return tz.startsWith('/') ? zoneOfPath(tz) : undefined
  }
  if (tz === '') return 'UTC' // an empty TZ is UTC for the C library and for ICU
  try {
    return zoneOfPath(readlinkSync('/etc/localtime'))
  } catch {
    return undefined
  }
}

/** `osTimeZone()` of the last `TZ` value seen (Node re-reads the zone when `process.env.TZ` is assigned, so must we). */
let os: { tz: string | undefined; zone: string | undefined } | undefined

function currentOsTimeZone(): string | undefined {
  const tz = process.env['TZ']
  if (os === undefined || os.tz !== tz) os = { tz, zone: osTimeZone() }
  return os.zone
}

/**
 * The IANA name of the machine's time zone: `osTimeZone()` when it can tell, else
 * `Intl.DateTimeFormat().resolvedOptions().timeZone` (~11 ms the first time).
 */
export function hostTimeZone(): string {
  return currentOsTimeZone() ?? Intl.DateTimeFormat().resolvedOptions().timeZone
}

/**
 * How `Date` can compute calendar fields in `timeZone` without ICU's formatter: `'utc'` (the UTC getters), `'local'`
 * (the local getters: `timeZone` is the zone the OS says this process's local time is in), or undefined (use `Intl`).
 */
export function dateFieldsIn(timeZone: string): 'utc' | 'local' | undefined {
  if (UTC_NAMES.has(timeZone)) return 'utc'
  return timeZone === currentOsTimeZone() ? 'local' : undefined
}
