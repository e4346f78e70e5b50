/** The sign-in form: shown when there is no token or the server refused it. */
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, ApiError, setToken, toApiError } from './api.js'
import { ErrorBox } from './components.js'
import type { Status } from './types.js'

export function SignIn(props: { refused: boolean; onSignedIn: () => void }): JSX.Element {
  const [value, setValue] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<ApiError | null>(
    props.refused
      ? new ApiError(
          401,
          'UNAUTHORIZED',
          'the server refused the token',
          'the token changes when the server’s data directory does; get the current one as below',
        )
      : null,
  )

  const submit = async (e: Event): Promise<void> => {
    e.preventDefault()
    const token = value.trim()
    if (token === '') {
      setError(new ApiError(0, 'INVALID_INPUT', 'enter the server token', null))
      return
    }
    setBusy(true)
    setToken(token)
    try {
      await api<Status>('/v1/status')
      props.onSignedIn()
    } catch (err) {
      setToken(null)
      const e2 = toApiError(err)
      setError(
        e2.status === 401
          ? new ApiError(401, 'UNAUTHORIZED', 'the server refused this token', 'check that you copied the whole token')
          : e2,
      )
    } finally {
      setBusy(false)
    }
  }

  return (
    <div class="shell">
      <header class="topbar">
        <p class="brand">
          <span aria-hidden="true">◆</span> mnemo <span class="muted">viewer</span>
        </p>
      </header>
      <main id="main" class="signin">
        <h1>Sign in</h1>
        <form onSubmit={(e) => void submit(e)} data-testid="sign-in-form" aria-describedby="token-hint">
          <ErrorBox error={error} testid="sign-in-error" />
          <div class="field">
            <label for="token">Server token</label>
            <input
              id="token"
              name="token"
              type="password"
              autoComplete="off"
              spellcheck={false}
              value={value}
              onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)}
              data-testid="token-input"
              aria-describedby="token-hint"
              required
            />
          </div>
          <p id="token-hint" class="hint">
            The token is in <code>&lt;data dir&gt;/server-token</code> (by default <code>~/.mnemo/server-token</code>), or run{' '}
            <code>mnemo viewer</code> to print the address with the token in it.
          </p>
          <button type="submit" class="button primary" disabled={busy} data-testid="sign-in">
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
      </main>
    </div>
  )
}
