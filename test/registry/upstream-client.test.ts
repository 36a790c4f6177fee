import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { callUpstream, MAX_UPSTREAM_REDIRECTS, UpstreamUnavailable } from '../../server/registry/upstream/client'
import { createUpstreamTransport, type UpstreamTransport } from '../../server/registry/upstream/transport'
import type { Upstream } from '../../server/firewall/schema'
import { bodyOf } from '../support/loopback'

/** A real listener that records what reached it, including bare connections. */
interface Listener {
  url: string
  connections: number
  requests: { method: string; path: string; authorization?: string; body: string }[]
  close(): Promise<void>
}

type Handler = (req: IncomingMessage, res: ServerResponse, self: Listener) => void

async function listen(host: string, handle: Handler): Promise<Listener> {
  const self = { connections: 0, requests: [] } as unknown as Listener
  const server: Server = createServer((req, res) => {
    void bodyOf(req).then(
      (body) => {
        self.requests.push({
          method: req.method!,
          path: req.url!,
          authorization: req.headers.authorization,
          body: body.toString(),
        })
        handle(req, res, self)
      },
      () => res.destroy(),
    )
  })
  server.on('connection', () => self.connections++)
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  self.url = `http://${host}:${(server.address() as AddressInfo).port}`
  self.close = async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return self
}

const upstream = (endpoint: string): Upstream => ({ id: 'up', endpoint, internal: false, cached: false })
const redirect = (res: ServerResponse, status: number, location: string) => res.writeHead(status, { location }).end()

let main: Listener
let other: Listener
/** On 127.0.0.2, outside the allowed network: nothing may ever reach it. */
let forbidden: Listener
/** Allows 127.0.0.1 only; a test with another policy uses its own (`withPolicy`). */
let transport: UpstreamTransport
const others: UpstreamTransport[] = []
const withPolicy = (allowedNetworks: string[], deniedNetworks: string[]) => {
  const own = createUpstreamTransport({ allowedNetworks, deniedNetworks })
  others.push(own)
  return own
}

beforeAll(async () => {
  transport = createUpstreamTransport({ allowedNetworks: ['127.0.0.1/32'], deniedNetworks: [] })
  other = await listen('127.0.0.1', (_req, res) => res.end('other'))
  forbidden = await listen('127.0.0.2', (_req, res) => res.end('secret'))
  main = await listen('127.0.0.1', (req, res) => {
    const url = new URL(req.url!, 'http://x')
    const hops = Number(url.searchParams.get('hops') ?? 0)
    if (url.pathname === '/chain')
      return hops > 0 ? redirect(res, 302, `/chain?hops=${hops - 1}`) : res.end('end of chain')
    if (url.pathname === '/to-forbidden') return redirect(res, 302, `${forbidden.url}/meta-data`)
    if (url.pathname === '/to-other') return redirect(res, 307, `${other.url}/elsewhere`)
    if (url.pathname === '/same-origin') return redirect(res, 301, '/final')
    if (url.pathname === '/to-file') return redirect(res, 302, 'file:///etc/passwd')
    if (url.pathname === '/see-other') return redirect(res, 303, '/final')
    res.end('final')
  })
})

afterEach(async () => {
  await Promise.all(others.splice(0).map((own) => own.close()))
})

afterAll(async () => {
  await transport.close()
  await Promise.all([main, other, forbidden].map((listener) => listener?.close()))
})

async function refusal(promise: Promise<unknown>): Promise<UpstreamUnavailable> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(UpstreamUnavailable)
  return error as UpstreamUnavailable
}

describe('callUpstream through the guarded agent', () => {
  it(`follows up to ${MAX_UPSTREAM_REDIRECTS} redirects and fails past them`, async () => {
    const ok = await callUpstream(transport, upstream(main.url), `${main.url}/chain?hops=${MAX_UPSTREAM_REDIRECTS}`)
    expect(await ok.text()).toBe('end of chain')
    const error = await refusal(
      callUpstream(transport, upstream(main.url), `${main.url}/chain?hops=${MAX_UPSTREAM_REDIRECTS + 1}`),
    )
    expect(error.reason).toBe(`more than ${MAX_UPSTREAM_REDIRECTS} redirects`)
  })

  it('does not follow a redirect to an address the policy refuses', async () => {
    const error = await refusal(callUpstream(transport, upstream(main.url), `${main.url}/to-forbidden`))
    expect(error.reason).toMatch(/127\.0\.0\.2 is a loopback address/)
    expect(forbidden.connections).toBe(0)
  })

  it('refuses a literal address before connecting', async () => {
    const error = await refusal(callUpstream(transport, upstream(forbidden.url), `${forbidden.url}/`))
    expect(error.reason).toMatch(/^address refused: 127\.0\.0\.2 is a loopback address/)
    expect(forbidden.connections).toBe(0)
  })

  it('refuses a name that resolves to a refused address, at connection time', async () => {
    const own = withPolicy([], [])
    const before = main.connections
    const port = new URL(main.url).port
    const error = await refusal(
      callUpstream(own, upstream(`http://localhost:${port}`), `http://localhost:${port}/final`),
    )
    expect(error.reason).toMatch(/localhost resolves to a refused address: .* is a loopback address/)
    expect(main.connections).toBe(before)
  })

  it('denied networks win over allowed ones', async () => {
    const own = withPolicy(['127.0.0.0/8'], ['127.0.0.1/32'])
    const before = main.connections
    const error = await refusal(callUpstream(own, upstream(main.url), `${main.url}/final`))
    expect(error.reason).toMatch(/UPSTREAM_DENIED_NETWORKS \(127\.0\.0\.1\/32\)/)
    expect(main.connections).toBe(before)
  })

  it('keeps Authorization on the same origin and drops it when a hop changes origin', async () => {
    main.requests.length = 0
    other.requests.length = 0
    const auth = { authorization: 'Bearer s3cret' }
    await (await callUpstream(transport, upstream(main.url), `${main.url}/same-origin`, auth)).text()
    expect(main.requests.map((r) => [r.path, r.authorization])).toEqual([
      ['/same-origin', 'Bearer s3cret'],
      ['/final', 'Bearer s3cret'],
    ])
    const moved = await callUpstream(transport, upstream(main.url), `${main.url}/to-other`, {
      method: 'PUT',
      body: 'payload',
      ...auth,
    })
    expect(await moved.text()).toBe('other')
    // 307 keeps method and body, but the credentials stay with their origin.
    expect(other.requests).toEqual([{ method: 'PUT', path: '/elsewhere', authorization: undefined, body: 'payload' }])
  })

  it('continues a 303 as GET without the body', async () => {
    main.requests.length = 0
    const post = { method: 'POST', body: 'x=1', headers: { 'content-type': 'text/plain' } }
    await (await callUpstream(transport, upstream(main.url), `${main.url}/see-other`, post)).text()
    expect(main.requests.map((r) => [r.method, r.path, r.body])).toEqual([
      ['POST', '/see-other', 'x=1'],
      ['GET', '/final', ''],
    ])
  })

  it('refuses a redirect to a non-http scheme', async () => {
    const error = await refusal(callUpstream(transport, upstream(main.url), `${main.url}/to-file`))
    expect(error.reason).toBe('redirect to a file URL refused')
  })
})
