import { invalidInput } from './errors.js'

/**
 * What a user name may be: 1–64 ASCII letters, digits and `. _ @ + -`,
 * starting with a letter or digit (an email address fits). ASCII only, so
 * no two names look alike (a Cyrillic `о` in `bоb`, composed and decomposed `ü`).
 */
export const USER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$/

/**
 * Checks a user name (`MNEMO_USER`, `--user`, the user of a team token).
 *
 * @param field - What to name in the error (`MNEMO_USER`, `user`).
 * @returns The name, unchanged.
 * @throws {MnemoError} `INVALID_INPUT` — empty, longer than 64 characters, or with other characters.
 */
export function checkUserName(name: string, field = 'user'): string {
  if (!USER_NAME_PATTERN.test(name)) {
    throw invalidInput(
      field,
      `${field} must be 1–64 ASCII letters, digits or . _ @ + -, starting with a letter or digit (got ${JSON.stringify(name.slice(0, 80))})`,
    )
  }
  return name
}

const USER_KEY_PREFIX = /^user:[^:]+:/

/**
 * An event as captured for `user` (undefined: no user, shared): the user set,
 * and its idempotency key namespaced by the user (`user:<name>:<key>`), so
 * two users capturing or importing the same source record each store their
 * own copy, and neither learns from a "duplicate" that the other has it.
 * An existing namespace (an event exported by another user) is replaced.
 */
export function ownEvent<E extends { idemKey: string; user?: string }>(event: E, user: string | undefined): E {
  const { user: _previous, ...rest } = event
  return (
    user === undefined ? { ...rest, idemKey: ownKey(event.idemKey, undefined) } : { ...rest, user, idemKey: ownKey(event.idemKey, user) }
  ) as E
}

/** An idempotency key (or a tombstone's) in `user`'s namespace (undefined: the shared one); see `ownEvent`. */
export function ownKey(key: string, user: string | undefined): string {
  const bare = key.replace(USER_KEY_PREFIX, '')
  return user === undefined ? bare : `user:${user}:${bare}`
}
