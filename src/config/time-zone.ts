/**
 * The machine's time zone, named as the OS names it, read without ICU's date formatter (its first use costs ~11 ms
 * CPU, more than a hook's capture work): see `osTimeZone`.
 */
import { readlinkSync } from 'node:fs'
import { noteLocalTimeZone, UTC_NAMES } from '../core/time-zone.js'

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

/**
 * The IANA name of the machine's time zone: `osTimeZone()` when it can tell (and then noted as the local time's zone,
 * so dates in it come from `Date`'s local getters: core/time-zone.ts), else `Intl.DateTimeFormat().resolvedOptions()`
 * (~11 ms the first time).
 */
export function hostTimeZone(): string {
  const zone = osTimeZone()
  if (zone === undefined) return Intl.DateTimeFormat().resolvedOptions().timeZone
  noteLocalTimeZone(zone)
  return zone
}
