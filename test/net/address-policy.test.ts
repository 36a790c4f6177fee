import { describe, expect, it } from 'vitest'
import {
  judgeAddress,
  normalizeCidr,
  upstreamAddressPolicy,
  webhookAddressPolicy,
} from '../../server/net/address-policy'
import { NetworkSettingError, parseUpstreamAddressSettings } from '../../server/net/upstream-settings'
import { configFromEnv } from '../../server/app/config'

const upstreams = (allowedNetworks: string[] = [], deniedNetworks: string[] = []) =>
  upstreamAddressPolicy({ allowedNetworks, deniedNetworks })

describe('upstream address policy (defaults)', () => {
  it.each([
    ['loopback', '127.0.0.1', /loopback/],
    ['loopback elsewhere in 127/8', '127.9.9.9', /loopback/],
    ['IPv6 loopback', '::1', /loopback/],
    ['bracketed IPv6 loopback', '[::1]', /loopback/],
    ['cloud metadata', '169.254.169.254', /link-local/],
    ['IPv6 link-local', 'fe80::1', /link-local/],
    ['unspecified', '0.0.0.0', /unspecified/],
    ['IPv6 unspecified', '::', /unspecified/],
    ['multicast', '224.0.0.1', /multicast/],
    ['IPv6 multicast', 'ff02::1', /multicast/],
    ['broadcast', '255.255.255.255', /broadcast/],
    ['reserved 240/4', '240.0.0.1', /reserved/],
    ['documentation range', '192.0.2.10', /reserved/],
    ['IPv6 documentation range', '2001:db8::1', /reserved/],
    ['v4-mapped loopback', '::ffff:127.0.0.1', /\(127\.0\.0\.1\) is a loopback/],
    ['v4-mapped metadata', '::ffff:a9fe:a9fe', /link-local/],
    ['6to4 loopback', '2002:7f00:1::', /loopback/],
    ['NAT64 metadata', '64:ff9b::a9fe:a9fe', /link-local/],
    ['IPv4-compatible loopback', '::127.0.0.1', /loopback/],
  ])('refuses %s (%s)', (_name, address, reason) => {
    const verdict = judgeAddress(address, upstreams())
    expect(verdict.allowed).toBe(false)
    expect(!verdict.allowed && verdict.reason).toMatch(reason)
  })

  const allowed = ['8.8.8.8', '93.184.216.34', '10.1.2.3', '172.20.0.1', '192.168.1.1', '100.64.0.1', 'fd00::1']
  it.each([...allowed, '2606:4700:4700::1111', '::ffff:10.0.0.1'])('allows public and private %s', (address) => {
    expect(judgeAddress(address, upstreams())).toEqual({ allowed: true })
  })

  it('refuses what is not an address at all', () => {
    expect(judgeAddress('localhost', upstreams()).allowed).toBe(false)
  })
})

describe('upstream address policy (settings)', () => {
  it('exempts UPSTREAM_ALLOWED_NETWORKS, also in the v4-mapped form a dual-stack socket reports', () => {
    const policy = upstreams(['127.0.0.0/8'])
    expect(judgeAddress('127.0.0.1', policy).allowed).toBe(true)
    expect(judgeAddress('::ffff:127.0.0.1', policy).allowed).toBe(true)
    // A v4 network does not cover the v6 loopback.
    expect(judgeAddress('::1', policy).allowed).toBe(false)
    expect(judgeAddress('169.254.169.254', policy).allowed).toBe(false)
  })

  it('refuses UPSTREAM_DENIED_NETWORKS, and deny wins over allow', () => {
    const policy = upstreams(['10.1.0.0/16'], ['10.0.0.0/8'])
    for (const address of ['10.1.2.3', '10.200.0.1', '::ffff:10.1.2.3']) {
      const verdict = judgeAddress(address, policy)
      const reason = expect.stringContaining('UPSTREAM_DENIED_NETWORKS (10.0.0.0/8)')
      expect(verdict).toEqual({ allowed: false, reason })
    }
    expect(judgeAddress('192.168.1.1', policy).allowed).toBe(true)
  })

  it('parses both settings, normalising bare addresses to one-host networks', () => {
    const env = { UPSTREAM_ALLOWED_NETWORKS: ' 127.0.0.0/8, ::1 ', UPSTREAM_DENIED_NETWORKS: '10.0.0.1' }
    expect(parseUpstreamAddressSettings(env)).toEqual({
      allowedNetworks: ['127.0.0.0/8', '::1/128'],
      deniedNetworks: ['10.0.0.1/32'],
    })
    expect(parseUpstreamAddressSettings({ UPSTREAM_ALLOWED_NETWORKS: '' })).toEqual({
      allowedNetworks: [],
      deniedNetworks: [],
    })
  })

  it.each([
    ['UPSTREAM_ALLOWED_NETWORKS', '10.0.0.0/33'],
    ['UPSTREAM_ALLOWED_NETWORKS', 'intranet'],
    ['UPSTREAM_DENIED_NETWORKS', '10.0.0.0/8,300.1.1.1'],
  ])('an invalid %s (%s) is a start-up error naming the variable', (variable, value) => {
    expect(() => parseUpstreamAddressSettings({ [variable]: value })).toThrow(NetworkSettingError)
    expect(() => configFromEnv({ [variable]: value })).toThrow(new RegExp(`^${variable}: invalid CIDR`))
  })

  it('normalizeCidr canonicalises or refuses', () => {
    expect(normalizeCidr('192.168.0.0/16')).toBe('192.168.0.0/16')
    expect(normalizeCidr('fd00:0::/8')).toBe('fd00::/8')
    expect(normalizeCidr('10.0.0.0/40')).toBeNull()
    expect(normalizeCidr('nope')).toBeNull()
  })
})

describe('webhook address policy', () => {
  it('allows public addresses only, unless WEBHOOK_ALLOWED_NETWORKS exempts one', () => {
    expect(judgeAddress('8.8.8.8', webhookAddressPolicy({ allowedNetworks: [] })).allowed).toBe(true)
    const refused = judgeAddress('10.1.2.3', webhookAddressPolicy({ allowedNetworks: [] }))
    expect(refused).toEqual({ allowed: false, reason: '10.1.2.3 is a private address' })
    expect(judgeAddress('10.1.2.3', webhookAddressPolicy({ allowedNetworks: ['10.0.0.0/8'] })).allowed).toBe(true)
  })
})
