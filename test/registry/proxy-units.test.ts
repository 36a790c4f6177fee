import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { parsePackagePath } from '../../server/registry/npm/paths'
import { verifyIntegrity } from '../../server/registry/upstream/integrity'
import { vulnerableVersions } from '../../server/registry/npm/advisories'
import { lookupOrder, publishTarget } from '../../server/registry/upstream/selection'
import {
  artifactAuthorization,
  escapePackageName,
  upstreamAuthorization,
  upstreamUrl,
} from '../../server/registry/upstream/client'
import { matchesLogFilter, type DecisionLogEntry } from '../../server/firewall/log-query'
import { blockedMessage } from '../../server/registry/responses'
import { reasonPhrase } from '../../server/registry/artifact-decision'
import { Upstream } from '../../server/firewall/schema'
import type { Decision } from '../../server/firewall/rules/evaluate'

const upstream = (fields: Record<string, unknown>) => Upstream.parse({ endpoint: 'https://r.example/npm/', ...fields })

describe('parsePackagePath', () => {
  it.each([
    ['/left-pad', { name: 'left-pad', rest: [] }],
    ['/@acme%2fwidget', { name: '@acme/widget', rest: [] }],
    ['/@acme%2Fwidget/1.0.0', { name: '@acme/widget', rest: ['1.0.0'] }],
    ['/@acme/widget/latest', { name: '@acme/widget', rest: ['latest'] }],
    ['/pkg/-rev/3-abc', { name: 'pkg', rest: ['-rev', '3-abc'] }],
  ])('parses %s', (path, expected) => expect(parsePackagePath(path)).toEqual(expected))

  it.each(['/', '/@acme', '/..%2f..', '/%E0%A4%A'])('refuses %s', (path) => expect(parsePackagePath(path)).toBeNull())
})

describe('verifyIntegrity', () => {
  const bytes = Buffer.from('tarball bytes')
  const sri = (algorithm: string) => `${algorithm}-${createHash(algorithm).update(bytes).digest('base64')}`
  it('accepts matching sha512 and rejects other bytes', () => {
    expect(verifyIntegrity(bytes, sri('sha512'))).toBe(true)
    expect(verifyIntegrity(Buffer.from('other'), sri('sha512'))).toBe(false)
  })
  it('uses the strongest algorithm present', () =>
    expect(verifyIntegrity(bytes, `sha1-AAAA ${sri('sha512')}`)).toBe(true))
  it('falls back to the hex shasum, and to null with nothing to check', () => {
    expect(verifyIntegrity(bytes, undefined, createHash('sha1').update(bytes).digest('hex'))).toBe(true)
    expect(verifyIntegrity(bytes)).toBeNull()
  })
})

describe('vulnerableVersions', () => {
  it('turns OSV events into a semver range', () => {
    const ranges = [
      {
        type: 'SEMVER' as const,
        events: [
          { introduced: '0' },
          { fixed: '1.2.0' },
          { introduced: '2.0.0' },
          { last_affected: '2.1.0' },
          { introduced: '3.0.0' },
        ],
      },
    ]
    expect(vulnerableVersions({ ranges, versions: ['0.0.1'] })).toBe('<1.2.0 || >=2.0.0 <=2.1.0 || >=3.0.0 || 0.0.1')
  })
})

describe('upstream selection', () => {
  it('looks names up on internal upstreams first, keeping the configured order within each group', () => {
    const order = lookupOrder([
      upstream({ id: 'pub1' }),
      upstream({ id: 'int1', internal: true }),
      upstream({ id: 'pub2' }),
      upstream({ id: 'int2', internal: true }),
    ])
    expect(order.map((u) => u.id)).toEqual(['int1', 'int2', 'pub1', 'pub2'])
  })
  it('publishes to the first internal upstream, else the first with credentials', () => {
    expect(
      publishTarget({
        upstreams: [upstream({ id: 'a', credentials: { token: 't' } }), upstream({ id: 'b', internal: true })],
      })?.id,
    ).toBe('b')
    expect(
      publishTarget({ upstreams: [upstream({ id: 'a' }), upstream({ id: 'b', credentials: { token: 't' } })] })?.id,
    ).toBe('b')
    expect(publishTarget({ upstreams: [upstream({ id: 'a' })] })).toBeUndefined()
  })
})

describe('upstream credentials', () => {
  const basic = upstream({
    id: 'u',
    credentials: { username: 'me', password: 'pw' },
    artifactCredentials: [{ host: 'cdn.example', credentials: { token: 'cdn-token' } }],
  })
  it('sends Basic for username/password and Bearer for a token', () => {
    expect(upstreamAuthorization(basic)).toBe(`Basic ${Buffer.from('me:pw').toString('base64')}`)
    expect(upstreamAuthorization(upstream({ id: 't', credentials: { token: 'tok' } }))).toBe('Bearer tok')
  })
  it('uses artifact credentials per host and never leaks upstream credentials to other hosts', () => {
    expect(artifactAuthorization(basic, 'https://cdn.example/x.tgz')).toBe('Bearer cdn-token')
    expect(artifactAuthorization(basic, 'https://r.example/npm/x/-/x-1.0.0.tgz')).toMatch(/^Basic /)
    expect(artifactAuthorization(basic, 'https://elsewhere.example/x.tgz')).toBeUndefined()
  })
  it('builds upstream URLs with escaped scoped names', () => {
    expect(upstreamUrl(basic, escapePackageName('@acme/widget'))).toBe('https://r.example/npm/@acme%2Fwidget')
  })
})

describe('matchesLogFilter', () => {
  const entry = {
    time: '2025-06-01T10:00:00.000Z',
    packageName: 'left-pad',
    blocked: true,
    user: 'dev',
  } as DecisionLogEntry
  it.each([
    [{}, true],
    [{ since: '2025-06-01T10:00:00Z' }, true],
    [{ since: '2025-06-01T10:00:01Z' }, false],
    [{ until: '2025-06-01T10:00:00Z' }, false],
    [{ until: '2025-06-01T11:00:00+01:00' }, false],
    [{ packageName: 'left-pad', blocked: true }, true],
    [{ packageName: 'right-pad' }, false],
    [{ blocked: false }, false],
    [{ user: 'dev', blocked: true }, true],
    [{ user: 'someone-else' }, false],
  ])('filter %j -> %s', (filter, expected) => expect(matchesLogFilter(entry, filter)).toBe(expected))
})

describe('reasonPhrase', () => {
  it('keeps the end of a long block message (request id and link) and stays within 500 Latin-1 characters', () => {
    const text = `fw-x@1.0 is blocked by firewall py rule vuln: ${'CVE-2099-0001 (high) something bad\n'.repeat(40)}. Request id: req-abc. Request an exception: https://dash.example/namespaces/acme/firewalls/py/exception-requests/new?request=req-abc`
    const phrase = reasonPhrase(text)
    expect(phrase.length).toBeLessThanOrEqual(500)
    expect(phrase).not.toContain('\n')
    expect(phrase.startsWith('fw-x@1.0 is blocked by firewall py rule vuln')).toBe(true)
    expect(phrase.endsWith('exception-requests/new?request=req-abc')).toBe(true)
    expect(reasonPhrase('short text')).toBe('short text')
  })
})

describe('blockedMessage', () => {
  it('names package@version, rule id, description, origin, request id and the exception form link', () => {
    const decision = {
      outcome: 'blocked',
      firewall: 'main',
      firewallVersion: 3,
      matches: [],
      message: 'no copyleft',
      rule: {
        id: 'deny-gpl',
        description: 'no copyleft',
        executionPhase: 'download',
        block: true,
        log: true,
        sourceFirewall: 'base',
        message: 'license GPL-3.0-only is denied',
      },
    } as Decision
    const site = {
      ns: 'acme',
      firewall: { id: 'web' },
      meta: { requestId: 'req-123' },
      dashboardUrl: 'https://firewall.example',
    }
    const text = blockedMessage(decision, 'fw-gpl', '1.0.0', site)
    for (const part of [
      'fw-gpl@1.0.0',
      'deny-gpl',
      'no copyleft',
      'inherited from firewall base',
      'GPL-3.0-only',
      'req-123',
    ])
      expect(text).toContain(part)
    // The link names the firewall the client called, not the base the rule came from.
    expect(text).toContain(
      'Request an exception: https://firewall.example/namespaces/acme/firewalls/web/exception-requests/new?request=req-123',
    )
  })
})
