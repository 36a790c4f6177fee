import { describe, expect, it } from 'vitest'
import {
  checkUrlSyntax,
  guardedLookup,
  isAllowedAddress,
  resolveAndCheck,
  type LookupAll,
} from '../../server/webhooks/protocol/ssrf'

const none = { allowedNetworks: [], rejectedDomains: [] }
const fakeDns =
  (table: Record<string, string[]>): LookupAll =>
  async (host) => {
    const addresses = table[host]
    if (!addresses) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  }

describe('isAllowedAddress', () => {
  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '2a00:1450:4001:81b::200e'])(
    'allows public %s',
    (address) => {
      expect(isAllowedAddress(address, none)).toBe(true)
    },
  )

  it.each([
    ['loopback', '127.0.0.1'],
    ['private 10/8', '10.1.2.3'],
    ['private 172.16/12', '172.20.0.1'],
    ['private 192.168/16', '192.168.1.1'],
    ['link-local / metadata', '169.254.169.254'],
    ['carrier-grade NAT', '100.64.0.1'],
    ['multicast', '224.0.0.1'],
    ['broadcast', '255.255.255.255'],
    ['unspecified', '0.0.0.0'],
    ['this network', '0.1.2.3'],
    ['documentation', '192.0.2.10'],
    ['benchmarking', '198.18.0.1'],
    ['reserved 240/4', '240.0.0.1'],
    ['v6 loopback', '::1'],
    ['v6 unspecified', '::'],
    ['v6 link-local', 'fe80::1'],
    ['v6 unique local', 'fd00::1'],
    ['v6 multicast', 'ff02::1'],
    ['v6 documentation', '2001:db8::1'],
    ['v4-mapped loopback', '::ffff:127.0.0.1'],
    ['v4-mapped private', '::ffff:10.0.0.1'],
    ['NAT64 to private', '64:ff9b::a00:1'],
    ['6to4 of loopback', '2002:7f00:1::1'],
    ['teredo of private', '2001:0:4136:e378:8000:63bf:f5ff:fffe'],
    ['v4-compatible loopback', '::127.0.0.1'],
    ['not global unicast', '4000::1'],
    ['garbage', 'not-an-ip'],
  ])('refuses %s (%s)', (_name, address) => {
    expect(isAllowedAddress(address, none)).toBe(false)
  })

  it('allows a v4-mapped public address and NAT64 of a public one', () => {
    expect(isAllowedAddress('::ffff:8.8.8.8', none)).toBe(true)
    expect(isAllowedAddress('64:ff9b::808:808', none)).toBe(true)
  })

  it('exempts operator-allowed networks, including their v4-mapped form', () => {
    const settings = { allowedNetworks: ['127.0.0.0/8', 'fd00::/8'], rejectedDomains: [] }
    expect(isAllowedAddress('127.0.0.1', settings)).toBe(true)
    expect(isAllowedAddress('::ffff:127.0.0.1', settings)).toBe(true)
    expect(isAllowedAddress('fd00::5', settings)).toBe(true)
    expect(isAllowedAddress('10.0.0.1', settings)).toBe(false)
  })
})

describe('checkUrlSyntax', () => {
  it('accepts http and https URLs with public or named hosts', () => {
    expect(checkUrlSyntax('https://hooks.example.com/in', none).ok).toBe(true)
    expect(checkUrlSyntax('http://93.184.216.34:8080/x', none).ok).toBe(true)
  })

  it.each(['ftp://example.com/', 'file:///etc/passwd', 'javascript:alert(1)', 'gopher://example.com'])(
    'refuses scheme of %s',
    (url) => {
      expect(checkUrlSyntax(url, none)).toMatchObject({ ok: false, code: 'url_scheme' })
    },
  )

  it.each(['not a url', '/relative', 'http://'])('calls %s invalid', (url) => {
    expect(checkUrlSyntax(url, none)).toMatchObject({ ok: false, code: 'url_invalid' })
  })

  it.each([
    'http://127.0.0.1/',
    'http://0x7f.1/',
    'http://2130706433/',
    'http://0177.0.0.1/',
    'http://127.1/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::1]/',
    'http://[fe80::1]/',
    'http://0.0.0.0/',
    'http://169.254.169.254/latest/meta-data/',
  ])('refuses the literal address in %s', (url) => {
    expect(checkUrlSyntax(url, none)).toMatchObject({ ok: false, code: 'url_not_public' })
  })

  it('relies on WHATWG URL normalising odd IPv4 forms', () => {
    expect(['http://0x7f.1/', 'http://2130706433/', 'http://0177.0.0.1/'].map((u) => new URL(u).hostname)).toEqual([
      '127.0.0.1',
      '127.0.0.1',
      '127.0.0.1',
    ])
  })

  it('refuses rejected domains and their subdomains, case-insensitively', () => {
    const settings = { allowedNetworks: [], rejectedDomains: ['evil.test'] }
    expect(checkUrlSyntax('https://evil.test/', settings)).toMatchObject({ ok: false, code: 'url_rejected_domain' })
    expect(checkUrlSyntax('https://A.B.EVIL.test./', settings)).toMatchObject({
      ok: false,
      code: 'url_rejected_domain',
    })
    expect(checkUrlSyntax('https://notevil.test/', settings).ok).toBe(true)
  })

  it('refuses credentials in the URL', () => {
    expect(checkUrlSyntax('https://user:pw@example.com/', none)).toMatchObject({ ok: false, code: 'url_invalid' })
  })

  it('allows a loopback literal inside allowedNetworks', () => {
    expect(checkUrlSyntax('http://127.0.0.1:9/', { allowedNetworks: ['127.0.0.0/8'], rejectedDomains: [] }).ok).toBe(
      true,
    )
  })
})

describe('resolveAndCheck', () => {
  const dns = fakeDns({
    'public.test': ['93.184.216.34', '2606:4700::1'],
    'mixed.test': ['93.184.216.34', '10.0.0.1'],
    'local.test': ['127.0.0.1'],
  })

  it('passes when every address is public', async () => {
    expect((await resolveAndCheck('https://public.test/', none, dns)).ok).toBe(true)
  })

  it('refuses when any address is not public', async () => {
    expect(await resolveAndCheck('https://mixed.test/', none, dns)).toMatchObject({ ok: false, code: 'url_not_public' })
    expect(await resolveAndCheck('https://local.test/', none, dns)).toMatchObject({ ok: false, code: 'url_not_public' })
  })

  it('accepts a name that does not resolve yet (each attempt resolves it again)', async () => {
    expect(await resolveAndCheck('https://nowhere.test/', none, dns)).toMatchObject({ ok: true })
  })

  it('runs the syntax checks first', async () => {
    expect(await resolveAndCheck('ftp://public.test/', none, dns)).toMatchObject({ code: 'url_scheme' })
  })
})

describe('guardedLookup', () => {
  const dns = fakeDns({ 'public.test': ['93.184.216.34'], 'rebind.test': ['127.0.0.1'] })
  const call = (host: string, options: object) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) =>
      guardedLookup(none, dns)(host, options, (error, address, family) => resolve({ error, address, family })),
    )

  it('passes public results in both callback shapes', async () => {
    expect(await call('public.test', {})).toMatchObject({ error: null, address: '93.184.216.34', family: 4 })
    expect(await call('public.test', { all: true })).toMatchObject({
      error: null,
      address: [{ address: '93.184.216.34', family: 4 }],
    })
  })

  it('refuses a name that now resolves to a private address', async () => {
    const { error } = await call('rebind.test', {})
    expect(error?.code).toBe('ERR_WEBHOOK_NOT_PUBLIC')
  })
})
