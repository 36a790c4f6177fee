import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkConnectedSocket, sendAttempt, USER_AGENT } from '../../server/webhooks/protocol/attempt'
import { generateSecret, signatureHeader } from '../../server/webhooks/protocol/signing'

interface Received {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}

/** A real receiver on 127.0.0.1 whose answer is chosen per path. */
let server: http.Server
let base: string
const received: Received[] = []

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', () => {
      received.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      })
      switch (req.url) {
        case '/ok':
          return res.writeHead(204).end()
        case '/fail':
          return res.writeHead(500).end('x'.repeat(10_000))
        case '/redirect':
          return res.writeHead(302, { location: `${base}/ok` }).end()
        case '/busy':
          return res.writeHead(429, { 'retry-after': '7' }).end('slow down')
        case '/hang':
          return // never answers
        default:
          return res.writeHead(404).end()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

const loopback = { allowedNetworks: ['127.0.0.0/8'], rejectedDomains: [], attemptTimeoutMs: 2_000 }
const secret = generateSecret()

function request(path: string, overrides: Partial<Parameters<typeof sendAttempt>[0]> = {}) {
  const body = '{"version":1,"events":[]}'
  const ts = Math.floor(Date.now() / 1000)
  const headers = {
    'webhook-id': 'whdel-test',
    'webhook-timestamp': String(ts),
    'webhook-signature': signatureHeader([secret], 'whdel-test', ts, body),
  }
  return sendAttempt({ url: `${base}${path}`, body, headers, timeoutMs: 2_000, settings: loopback, ...overrides })
}

describe('sendAttempt against a loopback receiver', () => {
  it('POSTs the signed body with the delivery headers and succeeds on 2xx', async () => {
    const outcome = await request('/ok')
    expect(outcome).toMatchObject({ kind: 'success', responseStatus: 204, responseBody: '' })
    expect(outcome.error).toBeUndefined()
    const last = received.at(-1)!
    expect(last.method).toBe('POST')
    expect(last.headers['content-type']).toBe('application/json')
    expect(last.headers['user-agent']).toBe(USER_AGENT)
    expect(last.body).toBe('{"version":1,"events":[]}')
    expect(() =>
      new Webhook(secret).verify(last.body, {
        'webhook-id': String(last.headers['webhook-id']),
        'webhook-timestamp': String(last.headers['webhook-timestamp']),
        'webhook-signature': String(last.headers['webhook-signature']),
      }),
    ).not.toThrow()
  })

  it('fails on 5xx and keeps only the first 4 KB of the answer', async () => {
    const outcome = await request('/fail')
    expect(outcome).toMatchObject({ kind: 'failure', responseStatus: 500 })
    expect(outcome.responseBody).toHaveLength(4096)
    expect(outcome.retryAfterMs).toBeUndefined()
  })

  it('does not follow a redirect and counts it as a failure', async () => {
    const before = received.length
    const outcome = await request('/redirect')
    expect(outcome).toMatchObject({ kind: 'failure', responseStatus: 302, error: 'redirect not followed' })
    expect(received.length).toBe(before + 1)
  })

  it('captures Retry-After on 429', async () => {
    expect(await request('/busy')).toMatchObject({
      kind: 'failure',
      responseStatus: 429,
      retryAfterMs: 7_000,
      responseBody: 'slow down',
    })
  })

  it('gives up on a hung receiver at the timeout with status 0', async () => {
    const started = Date.now()
    const outcome = await request('/hang', { timeoutMs: 200 })
    expect(outcome).toMatchObject({ kind: 'failure', responseStatus: 0, error: 'timeout' })
    // Well under the 2 s default of request(): the 200 ms timeout ended it, however loaded the machine.
    expect(Date.now() - started).toBeLessThan(1_800)
    expect(outcome.durationMillis).toBeGreaterThanOrEqual(190)
  })

  it('reports a header it cannot send as a failed attempt, sending nothing', async () => {
    const before = received.length
    const outcome = await request('/ok', { headers: { 'x-split': 'a\r\nx-injected: 1' } })
    expect(outcome).toMatchObject({ kind: 'failure', responseStatus: 0 })
    expect(outcome.error).toMatch(/header/i)
    expect(received.length).toBe(before)
  })

  it('reports a refused connection as status 0 with the error', async () => {
    const closed = http.createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    const outcome = await request('/ok', { url: `http://127.0.0.1:${port}/ok` })
    expect(outcome).toMatchObject({ kind: 'failure', responseStatus: 0 })
    expect(outcome.error).toMatch(/ECONNREFUSED/)
  })
})

describe('sendAttempt address policy', () => {
  it('refuses a loopback receiver that is not in allowedNetworks, before connecting', async () => {
    const before = received.length
    const outcome = await request('/ok', { settings: { ...loopback, allowedNetworks: [] } })
    expect(outcome).toMatchObject({ kind: 'failure', responseStatus: 0 })
    expect(outcome.error).toMatch(/^url_not_public/)
    expect(received.length).toBe(before)
  })

  it('refuses a name resolving to loopback at lookup time (DNS rebinding)', async () => {
    const before = received.length
    const port = new URL(base).port
    const outcome = await request('/ok', {
      url: `http://rebind.test:${port}/ok`,
      settings: { ...loopback, allowedNetworks: [] },
      lookup: async () => [{ address: '127.0.0.1', family: 4 }],
    })
    expect(outcome).toMatchObject({ kind: 'failure', responseStatus: 0 })
    expect(outcome.error).toMatch(/url_not_public/)
    expect(received.length).toBe(before)
  })

  it('delivers through a name when its address is allowed', async () => {
    const port = new URL(base).port
    const outcome = await request('/ok', {
      url: `http://receiver.test:${port}/ok`,
      lookup: async () => [{ address: '127.0.0.1', family: 4 }],
    })
    expect(outcome).toMatchObject({ kind: 'success', responseStatus: 204 })
  })

  it("waits for a connect as long as the configured attempt timeout, past undici's default 10 s", async () => {
    const port = new URL(base).port
    // A name that takes 12 s to resolve: undici's own connect timeout (10 s, its timer up to half a
    // second late) counts the lookup.
    const slowLookup = async () => {
      await new Promise((resolve) => setTimeout(resolve, 12_000))
      return [{ address: '127.0.0.1', family: 4 }]
    }
    const started = Date.now()
    const outcome = await request('/ok', {
      url: `http://slow-dns.test:${port}/ok`,
      timeoutMs: 15_000,
      settings: { ...loopback, attemptTimeoutMs: 15_000 },
      lookup: slowLookup,
    })
    expect(outcome).toMatchObject({ kind: 'success', responseStatus: 204 })
    expect(Date.now() - started).toBeGreaterThanOrEqual(12_000)
  }, 20_000)

  it('refuses a rejected domain', async () => {
    const outcome = await request('/ok', {
      url: 'http://hooks.evil.test/ok',
      settings: { ...loopback, allowedNetworks: [], rejectedDomains: ['evil.test'] },
    })
    expect(outcome.error).toMatch(/^url_rejected_domain/)
  })

  it('re-checks the peer after connecting and sends nothing when it is refused', async () => {
    const before = received.length
    const port = new URL(base).port
    // Allowed when the lookup is judged, refused by the time the socket connects.
    let reads = 0
    const shifting = {
      rejectedDomains: [],
      attemptTimeoutMs: 2_000,
      get allowedNetworks() {
        return reads++ === 0 ? ['127.0.0.0/8'] : []
      },
    }
    // The connection the attempt opens, and its end: a request would be read before the socket closes.
    const closed = new Promise<void>((resolve) => server.once('connection', (socket) => socket.once('close', resolve)))
    const outcome = await request('/ok', {
      url: `http://receiver.test:${port}/ok`,
      settings: shifting,
      lookup: async () => [{ address: '127.0.0.1', family: 4 }],
    })
    expect(outcome).toMatchObject({ kind: 'failure', responseStatus: 0 })
    expect(outcome.error).toMatch(/connected to 127\.0\.0\.1/)
    await closed
    expect(received.length).toBe(before)
  })

  it('checks the connected peer address', () => {
    expect(checkConnectedSocket({ remoteAddress: '127.0.0.1' }, { allowedNetworks: [], rejectedDomains: [] })).toMatch(
      /not a public/,
    )
    expect(checkConnectedSocket({ remoteAddress: '::ffff:127.0.0.1' }, loopback)).toBeNull()
    expect(
      checkConnectedSocket({ remoteAddress: '93.184.216.34' }, { allowedNetworks: [], rejectedDomains: [] }),
    ).toBeNull()
    expect(checkConnectedSocket({ remoteAddress: undefined }, loopback)).toMatch(/no remote address/)
  })
})

describe('sendAttempt connection reuse', () => {
  /** A receiver that counts connections; `dropSecond` resets a kept-alive connection's second request unanswered. */
  async function receiver(dropSecond: boolean) {
    let connections = 0
    let arrived = 0
    const handled: string[] = []
    const perSocket = new WeakMap<object, number>()
    const server = http.createServer((req, res) => {
      const seen = (perSocket.get(req.socket) ?? 0) + 1
      perSocket.set(req.socket, seen)
      arrived++
      req.resume()
      req.on('end', () => {
        if (dropSecond && seen === 2) return req.socket.destroy()
        handled.push(req.headers['webhook-id'] as string)
        res.writeHead(204).end()
      })
    })
    server.on('connection', () => connections++)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
    const close = async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
    return { url, handled, connections: () => connections, arrived: () => arrived, close }
  }
  // One policy object per test, as one per process in the service: the pool is the policy's.
  const policy = () => ({ ...loopback })

  it('sends consecutive attempts to one receiver over one kept-alive connection', async () => {
    const target = await receiver(false)
    const settings = policy()
    try {
      for (const id of ['a', 'b', 'c']) {
        const outcome = await request('/ok', { url: target.url, settings, headers: { 'webhook-id': id } })
        expect(outcome).toMatchObject({ kind: 'success', responseStatus: 204 })
      }
      expect(target.handled).toEqual(['a', 'b', 'c'])
      expect(target.connections()).toBe(1)
    } finally {
      await target.close()
    }
  })

  it('reports a reused connection the receiver drops as a failed attempt, sending nothing behind its back', async () => {
    const target = await receiver(true)
    const settings = policy()
    try {
      expect(await request('/ok', { url: target.url, settings, headers: { 'webhook-id': 'first' } })).toMatchObject({
        kind: 'success',
      })
      const dropped = await request('/ok', { url: target.url, settings, headers: { 'webhook-id': 'second' } })
      expect(dropped).toMatchObject({ kind: 'failure', responseStatus: 0 })
      expect(dropped.error).toMatch(/UND_ERR_SOCKET: other side closed/)
      // One request per attempt reached the receiver; the next attempt opens a new connection.
      expect(target.arrived()).toBe(2)
      const retried = await request('/ok', { url: target.url, settings, headers: { 'webhook-id': 'second' } })
      expect(retried).toMatchObject({ kind: 'success', responseStatus: 204 })
      expect(target.handled).toEqual(['first', 'second'])
      expect(target.connections()).toBe(2)
    } finally {
      await target.close()
    }
  })
})
