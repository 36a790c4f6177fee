import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { canonicalAddress, forwardedView, parseTrustProxy, TrustProxySettingError } from '../../server/http/trust-proxy'
import { configFromEnv } from '../../server/app/config'
import { apiClient, bootstrapToken, startServer, type RunningServer } from '../support/server'

/**
 * Issue 24, finding 5: `TRUST_PROXY=true` took the leftmost `X-Forwarded-For` entry, which the
 * client writes. A spoofed entry walked around the auth-failure limit, 12 calls naming 10.9.9.9
 * locked that address out, and `<x-xss>not-an-ip` was stored as the audit's `remoteAddr`.
 */

const xff = (value: string) => ({ 'x-forwarded-for': value })

describe('TRUST_PROXY values', () => {
  it('unset, 0 and false believe no header', () => {
    for (const value of [undefined, '', ' ', '0', 'false']) expect(parseTrustProxy(value)).toEqual({ kind: 'none' })
  })

  it('refuses true at start, saying what to set instead', () => {
    expect(() => parseTrustProxy('true')).toThrow(TrustProxySettingError)
    expect(() => parseTrustProxy('TRUE')).toThrow(/^TRUST_PROXY: .*number of reverse proxies.*CIDR/)
    expect(() => configFromEnv({ TRUST_PROXY: 'true' })).toThrow(/^TRUST_PROXY: /)
  })

  it('refuses what is neither a count nor CIDRs', () => {
    for (const value of ['yes', '10.0.0.0/33', '1.5', '-1', '10.0.0.0/8,nope', '99'])
      expect(() => parseTrustProxy(value), value).toThrow(TrustProxySettingError)
  })

  it('reads a hop count and a CIDR list (bare addresses are single hosts)', () => {
    expect(parseTrustProxy('2')).toEqual({ kind: 'hops', hops: 2 })
    const networks = parseTrustProxy(' 10.0.0.0/8 , 127.0.0.1,fd00::/8')
    expect(networks.kind).toBe('networks')
    expect(networks.kind === 'networks' && networks.networks.map(([address, bits]) => `${address}/${bits}`)).toEqual([
      '10.0.0.0/8',
      '127.0.0.1/32',
      'fd00::/8',
    ])
  })
})

describe('canonical addresses', () => {
  it('one text per address, ports and brackets dropped', () => {
    expect(canonicalAddress('::ffff:10.0.0.1')).toBe('10.0.0.1')
    expect(canonicalAddress('0:0:0:0:0:0:0:1')).toBe('::1')
    expect(canonicalAddress('2001:DB8::1')).toBe('2001:db8::1')
    expect(canonicalAddress('[2001:db8::1]:8443')).toBe('2001:db8::1')
    expect(canonicalAddress('203.0.113.7:51234')).toBe('203.0.113.7')
  })

  it('no junk, no legacy IPv4 spellings', () => {
    for (const junk of [
      '<x-xss>not-an-ip',
      '',
      'unknown',
      '10.9.9',
      '0x0a.9.9.9',
      '010.9.9.9',
      '1.2.3.4.5',
      'a'.repeat(80),
    ])
      expect(canonicalAddress(junk), junk).toBeUndefined()
  })
})

describe('the forwarded view', () => {
  const hops = (n: number) => parseTrustProxy(String(n))
  const proxies = parseTrustProxy('10.0.0.0/8,fd00::/8')

  it('unset: the socket peer, whatever the headers say', () => {
    const view = forwardedView(parseTrustProxy(undefined), '::ffff:127.0.0.1', {
      ...xff('10.9.9.9'),
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'evil.example',
    })
    expect(view).toEqual({ address: '127.0.0.1' })
  })

  it('N proxies: the Nth entry from the right; what the client wrote to its left is ignored', () => {
    expect(forwardedView(hops(1), '10.0.0.2', xff('10.9.9.9, 203.0.113.7')).address).toBe('203.0.113.7')
    expect(forwardedView(hops(2), '10.0.0.2', xff('10.9.9.9, 203.0.113.7, 10.0.0.1')).address).toBe('203.0.113.7')
    // Fewer entries than proxies: the leftmost, which a trusted proxy wrote.
    expect(forwardedView(hops(2), '10.0.0.2', xff('203.0.113.7')).address).toBe('203.0.113.7')
    expect(forwardedView(hops(1), '10.0.0.2', {}).address).toBe('10.0.0.2')
  })

  it('CIDRs: entries skipped from the right while they are proxies', () => {
    expect(forwardedView(proxies, '10.0.0.2', xff('10.9.9.9, 203.0.113.7, 10.0.0.1')).address).toBe('203.0.113.7')
    expect(forwardedView(proxies, 'fd00::2', xff('2001:db8::7')).address).toBe('2001:db8::7')
    // Every entry a proxy: the leftmost.
    expect(forwardedView(proxies, '10.0.0.2', xff('10.1.1.1, 10.0.0.1')).address).toBe('10.1.1.1')
  })

  it('CIDRs: a peer outside the ranges is the client, and none of its headers count', () => {
    const view = forwardedView(proxies, '198.51.100.4', {
      ...xff('10.9.9.9'),
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'evil.example',
    })
    expect(view).toEqual({ address: '198.51.100.4' })
  })

  it('a non-address entry is never the client address: the socket peer stands in', () => {
    expect(forwardedView(hops(1), '10.0.0.2', xff('<x-xss>not-an-ip')).address).toBe('10.0.0.2')
    expect(forwardedView(proxies, '10.0.0.2', xff('<x-xss>not-an-ip, 10.0.0.1')).address).toBe('10.0.0.2')
    expect(forwardedView(hops(1), '10.0.0.2', xff('unknown')).address).toBe('10.0.0.2')
  })

  it('proto and host of a trusted proxy: the value of the client hop, a single value as it is', () => {
    const view = forwardedView(hops(1), '10.0.0.2', {
      ...xff('203.0.113.7'),
      'x-forwarded-proto': 'HTTPS',
      'x-forwarded-host': 'registry.example',
    })
    expect(view).toEqual({ address: '203.0.113.7', proto: 'https', host: 'registry.example' })
    // An appending proxy: the client's own value is to the left and ignored.
    const appended = forwardedView(hops(1), '10.0.0.2', {
      ...xff('203.0.113.7'),
      'x-forwarded-proto': 'http, https',
      'x-forwarded-host': 'evil.example, registry.example',
    })
    expect(appended).toMatchObject({ proto: 'https', host: 'registry.example' })
    expect(forwardedView(hops(1), '10.0.0.2', { 'x-forwarded-proto': 'gopher' }).proto).toBeUndefined()
  })
})

// A day-long window: the limiter's windows are aligned to the clock, and a minute boundary in the
// middle of a test's calls split their counts (a CI run saw 3 + 7 of 10, and the 6th went through).
const LIMIT = 5
const BAD_TOKEN = { authorization: `Bearer fwp_${'x'.repeat(40)}` }

/** Calls without a valid token, as a client behind the proxy. */
async function badCalls(server: RunningServer, count: number, headers: Record<string, string>): Promise<number[]> {
  const statuses: number[] = []
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${server.url}/v1/default/config`, { headers: { ...BAD_TOKEN, ...headers } })
    await response.arrayBuffer()
    statuses.push(response.status)
  }
  return statuses
}

async function auditAddresses(server: RunningServer): Promise<string[]> {
  const audit = await apiClient(server.url, bootstrapToken(server))('GET', '/v1/default/audit?limit=1000')
  expect(audit.status).toBe(200)
  return audit.body.flatMap((entry: { remoteAddr?: string }) =>
    entry.remoteAddr === undefined ? [] : [entry.remoteAddr],
  )
}

for (const [mode, setting] of [
  ['one proxy', '1'],
  ['proxies named by CIDR', '127.0.0.0/8'],
] as const) {
  describe(`behind ${mode} (TRUST_PROXY=${setting}; the test client plays the proxy on loopback)`, () => {
    let server: RunningServer
    beforeAll(async () => {
      server = await startServer({ TRUST_PROXY: setting, AUTH_FAILURE_RATE_LIMIT: `${LIMIT}/1d` })
    }, 60_000)
    afterAll(async () => {
      await server?.stop()
    })

    it('a spoofed leftmost entry does not give a fresh address: the limit holds', async () => {
      const statuses: number[] = []
      for (let i = 0; i < 2 * LIMIT; i++)
        statuses.push(...(await badCalls(server, 1, xff(`198.51.100.${i}, 203.0.113.10`))))
      expect(statuses).toEqual([...Array(LIMIT).fill(401), ...Array(LIMIT).fill(429)])
    })

    it('12 calls naming 10.9.9.9 do not lock 10.9.9.9 out', async () => {
      expect(await badCalls(server, 12, xff('10.9.9.9, 203.0.113.20'))).toContain(429)
      expect(await badCalls(server, 1, xff('10.9.9.9'))).toEqual([401])
    })

    it('the audit records the address the proxy saw, never a non-address', async () => {
      await badCalls(server, 1, xff('<x-xss>not-an-ip'))
      await badCalls(server, 1, xff('203.0.113.30'))
      const addresses = await auditAddresses(server)
      expect(addresses).toContain('203.0.113.30')
      expect(addresses).toContain('127.0.0.1')
      expect(addresses.filter((address) => !/^[\d.]+$|:/.test(address))).toEqual([])
      expect(addresses).not.toContain('198.51.100.0')
    })
  })
}

describe('without TRUST_PROXY', () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer({ AUTH_FAILURE_RATE_LIMIT: `${LIMIT}/1d` })
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
  })

  it('X-Forwarded-For is ignored: every call counts against the socket peer', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 2 * LIMIT; i++) statuses.push(...(await badCalls(server, 1, xff(`198.51.100.${i}`))))
    expect(statuses).toEqual([...Array(LIMIT).fill(401), ...Array(LIMIT).fill(429)])
    expect(new Set(await auditAddresses(server))).toEqual(new Set(['127.0.0.1']))
  })
})
