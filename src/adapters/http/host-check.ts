import { hostname, networkInterfaces } from 'node:os'

/** Host names every server answers to: the loopback names, which only this machine can reach it by. */
const LOOPBACK_HOSTS: readonly string[] = ['127.0.0.1', 'localhost', '::1']

/**
 * The host names (no port) a server bound to `bindHost` answers to, lower-case:
 * the loopback names, the bound address itself, and for a wildcard bind
 * (`0.0.0.0`, `::`) every address of this machine's interfaces and its host
 * name; plus `extra` (`--allowed-hosts`, for a DNS name a team reaches it by).
 *
 * This is the defence against DNS rebinding that the MCP streamable HTTP
 * transport rules ask for (validate `Host` and `Origin`) and that Vite's
 * `server.allowedHosts` applies: a page of evil.example whose name is made to
 * resolve to 127.0.0.1 still sends `Host: evil.example`.
 */
export function allowedHostNames(bindHost: string, extra: readonly string[] = []): Set<string> {
  const names = new Set<string>([...LOOPBACK_HOSTS, bindHost, ...extra].map(normaliseHost))
  if (bindHost === '0.0.0.0' || bindHost === '::' || bindHost === '') {
    names.add(normaliseHost(hostname()))
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) names.add(normaliseHost(a.address))
  }
  return names
}

/** A host name as compared: lower-case, IPv6 brackets and an IPv6 zone removed, a final dot removed. */
function normaliseHost(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/%.*$/, '')
    .replace(/\.$/, '')
}

/** The host name of a `Host` header value (`name`, `name:port`, `[v6]:port`), or undefined when it is malformed. */
function hostOfHeader(value: string): string | undefined {
  const m = /^(\[[0-9a-fA-F:.%\w]+\]|[^:[\]/\s@]+)(?::(\d{1,5}))?$/.exec(value.trim())
  return m ? normaliseHost(m[1]!) : undefined
}

/**
 * Why a request's `Host` or `Origin` header is refused, or undefined when
 * both are acceptable. `Host` must name an allowed host (any port; a missing
 * Host passes: HTTP/1.0 clients and in-process calls send none, and a browser
 * always sends one). `Origin`, when present (browsers send it on cross-origin
 * and on POST requests), must be `http(s)://<allowed host>[:port]`; `null`
 * (a sandboxed or file: page) is refused.
 *
 * @returns A message naming the header and its value.
 */
export function refusedHostOrOrigin(
  headers: { host: string | undefined; origin: string | undefined },
  allowed: ReadonlySet<string>,
): string | undefined {
  if (headers.host !== undefined) {
    const host = hostOfHeader(headers.host)
    if (host === undefined || !allowed.has(host)) return `Host ${JSON.stringify(headers.host)} is not a name of this server`
  }
  if (headers.origin !== undefined) {
    let host: string | undefined
    try {
      const url = new URL(headers.origin)
      host = url.protocol === 'http:' || url.protocol === 'https:' ? normaliseHost(url.hostname) : undefined
    } catch {
      host = undefined
    }
    if (host === undefined || !allowed.has(host)) return `Origin ${JSON.stringify(headers.origin)} is not this server's`
  }
  return undefined
}
