import { afterEach, describe, expect, it } from 'vitest'
import { dateFieldsIn } from '../core/time-zone.js'
import { zonedDate, zonedMidnight } from '../retrieval/time-expressions.js'
import { hostTimeZone, osTimeZone } from './time-zone.js'

const savedTz = process.env['TZ']
afterEach(() => {
  if (savedTz === undefined) delete process.env['TZ']
  else process.env['TZ'] = savedTz
})

describe('osTimeZone', () => {
  it('reads an IANA name, a :name, a zoneinfo path or an empty TZ, and nothing from a POSIX rule string', () => {
    expect(osTimeZone({ TZ: 'Europe/Paris' })).toBe('Europe/Paris')
    expect(osTimeZone({ TZ: ':America/Argentina/Buenos_Aires' })).toBe('America/Argentina/Buenos_Aires')
    expect(osTimeZone({ TZ: '/usr/share/zoneinfo/Asia/Tokyo' })).toBe('Asia/Tokyo')
    expect(osTimeZone({ TZ: 'Etc/GMT+5' })).toBe('Etc/GMT+5')
    expect(osTimeZone({ TZ: 'UTC' })).toBe('UTC')
    expect(osTimeZone({ TZ: '' })).toBe('UTC')
    expect(osTimeZone({ TZ: 'CET-1CEST,M3.5.0,M10.5.0/3' })).toBeUndefined()
    expect(osTimeZone({ TZ: '/etc/localtime-copy' })).toBeUndefined()
  })

  it('names the zone Intl finds for the same TZ', () => {
    for (const tz of ['Europe/Paris', 'Asia/Kolkata', 'America/New_York', 'UTC']) {
      process.env['TZ'] = tz
      // The same zone, under the OS's name (ICU may name it by an older alias: Asia/Kolkata is Asia/Calcutta there).
      const canonical = (name: string): string => new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone
      expect(canonical(hostTimeZone())).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone)
      expect(hostTimeZone()).toBe(tz)
      expect(dateFieldsIn(tz)).toBe(tz === 'UTC' ? 'utc' : 'local')
    }
    process.env['TZ'] = 'Europe/Paris'
    hostTimeZone()
    expect(dateFieldsIn('Asia/Tokyo')).toBeUndefined()
    // TZ changed since the zone was noted: Intl again.
    process.env['TZ'] = 'Asia/Tokyo'
    expect(dateFieldsIn('Europe/Paris')).toBeUndefined()
  })
})

describe('calendar dates without Intl', () => {
  // Zones with DST, half and quarter hours, a skipped day (Apia 2011-12-30), midnight set back (Gaza) and a 3-hour
  // change (Casey 2010): the local and UTC getters must give what ICU's formatter gives.
  const ZONES = [
    'Europe/Paris',
    'America/New_York',
    'Pacific/Apia',
    'Australia/Lord_Howe',
    'Asia/Kathmandu',
    'Asia/Gaza',
    'Antarctica/Casey',
    'America/Sao_Paulo',
  ]

  it('dates every hour of 2009–2012 as the formatter does, and starts every day at the same instant', () => {
    const days: { y: number; m: number; d: number }[] = []
    for (let t = Date.UTC(2009, 0, 1); t < Date.UTC(2013, 0, 1); t += 86_400_000) {
      const d = new Date(t)
      days.push({ y: d.getUTCFullYear(), m: d.getUTCMonth() + 1, d: d.getUTCDate() })
    }
    for (const zone of ZONES) {
      const format = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        weekday: 'short',
      })
      process.env['TZ'] = 'UTC' // the zone is not the host's: the formatter's path
      const slow = days.map((d) => zonedMidnight(d, zone))
      process.env['TZ'] = zone // the zone is the host's: the getters' path
      expect(hostTimeZone()).toBe(zone)
      expect(dateFieldsIn(zone)).toBe('local')
      expect(days.map((d) => zonedMidnight(d, zone))).toEqual(slow)
      for (let t = Date.UTC(2009, 0, 1) + 1_234_567; t < Date.UTC(2013, 0, 1); t += 3_600_000) {
        const parts = Object.fromEntries(format.formatToParts(t).map((p) => [p.type, p.value]))
        const got = zonedDate(t, zone)
        expect([got.y, got.m, got.d, got.weekday]).toEqual([
          Number(parts['year']),
          Number(parts['month']),
          Number(parts['day']),
          ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(parts['weekday']!),
        ])
      }
    }
  })

  it('starts a day whose midnight comes twice at the first one', () => {
    process.env['TZ'] = 'UTC'
    // Gaza, 2009-09-04: clocks went from 01:00 back to 00:00, so 00:00 came at 21:00 and again at 22:00 UTC.
    expect(new Date(zonedMidnight({ y: 2009, m: 9, d: 4 }, 'Asia/Gaza')).toISOString()).toBe('2009-09-03T21:00:00.000Z')
  })
})
