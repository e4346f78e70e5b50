import { invalidInput } from './errors.js'

/** What a user name may be: 1–64 characters, letters, digits and `. _ @ + -`, starting with a letter or digit (an email address fits). */
export const USER_NAME_PATTERN = /^[\p{L}\p{N}][\p{L}\p{N}._@+-]{0,63}$/u

/**
 * Checks a user name (`MNEMO_USER`, `--user`, the user of a team token).
 *
 * @param field - What to name in the error (`MNEMO_USER`, `user`).
 * @returns The name, unchanged.
 * @throws {MnemoError} `INVALID_INPUT` — empty, longer than 64 characters, or with other characters.
 */
export function checkUserName(name: string, field = 'user'): string {
  if (!USER_NAME_PATTERN.test(name)) {
    throw invalidInput(field, `${field} must be 1–64 letters, digits or . _ @ + -, starting with a letter or digit (got ${JSON.stringify(name.slice(0, 80))})`)
  }
  return name
}
