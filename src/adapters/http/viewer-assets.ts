import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { serveStatic } from '@hono/node-server/serve-static'
import type { Env, Hono, MiddlewareHandler } from 'hono'
import { errorJson } from './error-response.js'

/**
 * Content-Security-Policy of every viewer response: scripts, styles and
 * fetches from this origin only, no inline script or style, no plugins, no
 * framing, no form posts. Stored text is untrusted; even if some were ever
 * rendered as markup it could not run or send anything anywhere.
 */
export const VIEWER_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/**
 * The folder of the built viewer (`dist/viewer`: index.html, app.js,
 * app.css), found from this module whether it runs from `dist/` or, in
 * tests, from `src/`.
 */
function viewerDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url))
  return path.resolve(here, '..', '..', '..', 'dist', 'viewer')
}

/**
 * Whether a request is for the viewer's page or assets (what `registerViewer`
 * serves): these hold no data, so they need no token; the page asks for it
 * and sends it on every /v1 call.
 */
export function isViewerAsset(method: string, p: string): boolean {
  return (method === 'GET' || method === 'HEAD') && (p === '/' || p === '/favicon.ico' || p.startsWith('/viewer/'))
}

/**
 * Serves the viewer: `GET /` is its page, `GET /viewer/<file>` its assets
 * (`/favicon.ico` redirects to its icon).
 * Public (no token): the page holds no data; it asks for the token and
 * sends it on every /v1 call. Every answer carries `VIEWER_CSP`,
 * `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer`.
 * Without a build (`npm run build`), `/` answers 503 saying so.
 */
// Any app type: the viewer routes read no request variables.
export function registerViewer<E extends Env>(app: Hono<E>, dir = viewerDir()): void {
  const secure = async (c: { header: (name: string, value: string) => void }, next: () => Promise<void>): Promise<void> => {
    await next()
    c.header('Content-Security-Policy', VIEWER_CSP)
    c.header('X-Content-Type-Options', 'nosniff')
    c.header('Referrer-Policy', 'no-referrer')
    c.header('Cache-Control', 'no-cache')
  }
  app.use('/', secure)
  app.use('/viewer/*', secure)
  const missing = (): Response =>
    errorJson(
      503,
      'VIEWER_NOT_BUILT',
      `the viewer is not built (no ${path.join(dir, 'index.html')})`,
      'run npm run build in the mnemo checkout, then restart mnemo serve',
    )
  // Made on first use and the build checked per request (a stat): a build made while the server runs is picked up.
  let handlers: { page: MiddlewareHandler; assets: MiddlewareHandler } | undefined
  const built = (): typeof handlers => {
    if (!existsSync(path.join(dir, 'index.html'))) return undefined
    handlers ??= {
      page: serveStatic({ root: dir, path: 'index.html' }),
      assets: serveStatic({ root: dir, rewriteRequestPath: (p) => p.replace(/^\/viewer/, '') }),
    }
    return handlers
  }
  app.get('/', async (c, next) => (await built()?.page(c, next)) ?? missing())
  app.get('/viewer/*', async (c, next) => (await built()?.assets(c, next)) ?? missing())
  // Browsers ask for it on their own, without the token.
  app.get('/favicon.ico', (c) => c.redirect('/viewer/favicon.svg', 301))
}
