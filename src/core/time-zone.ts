/**
 * Calendar fields without ICU's date formatter. The first `Intl.DateTimeFormat` a process makes costs ~11 ms of CPU
 * (ICU loads its calendar and pattern data), more than a hook's whole capture work; the calendar date of an instant
 * in UTC, or in the zone the process's local time is in, comes from `Date`'s getters instead. Which zone that is, the
 * configuration finds from the OS (config/time-zone.ts) and notes here: this layer reads no file.
 */

/** Names of zones that are UTC all year (IANA tz database `backward` and `etcetera` files). */
export const UTC_NAMES = new Set([
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

/** The zone `noteLocalTimeZone` was told the local time is in, and the `TZ` it was told under. */
let local: { zone: string; tz: string | undefined } | undefined

/**
 * Notes that this process's local time (`Date`'s local getters) is in IANA zone `zone`, as the OS says (config's
 * `hostTimeZone`). Holds while `process.env.TZ` keeps the value it has now: Node re-reads the zone when it changes.
 */
export function noteLocalTimeZone(zone: string): void {
  local = { zone, tz: process.env['TZ'] }
}

/**
 * How `Date` can compute calendar fields in `timeZone` without ICU's formatter: `'utc'` (the UTC getters), `'local'`
 * (the local getters: `timeZone` is the zone noted as the local time's), or undefined (use `Intl`).
 */
export function dateFieldsIn(timeZone: string): 'utc' | 'local' | undefined {
  if (UTC_NAMES.has(timeZone)) return 'utc'
  return local !== undefined && local.zone === timeZone && local.tz === process.env['TZ'] ? 'local' : undefined
}
