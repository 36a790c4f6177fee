import { describe, expect, it } from 'vitest'
import { redactFirewall, refuseUnrestored, restoreRedacted } from '../../server/firewall/redact'
import { DomainError } from '../../server/common/errors'
import { FirewallInput, REDACTED, type Firewall } from '../../server/firewall/schema'

const stored: Firewall = {
  id: 'fw',
  version: 2,
  ecosystem: 'npm',
  name: 'fw',
  description: '',
  rules: [],
  exceptions: [],
  extends: [],
  permissions: {},
  updatedAt: '2024-01-01T00:00:00Z',
  upstreams: [
    {
      id: 'legit',
      endpoint: 'https://registry.example/npm/',
      internal: false,
      cached: false,
      credentials: { username: 'ci', password: 'pa55' },
      artifactCredentials: [{ host: 'cdn.example', credentials: { token: 'cdn-secret' } }],
    },
    {
      id: 'other',
      endpoint: 'https://other.example/',
      internal: false,
      cached: false,
      credentials: { token: 'other-secret' },
    },
  ],
}
/** What a client read back (every secret redacted), as a PUT body. */
const readBack = (): FirewallInput => FirewallInput.parse({ ...redactFirewall(stored), version: undefined })
const withUpstream = (index: number, patch: object): FirewallInput => {
  const body = readBack()
  body.upstreams[index] = { ...body.upstreams[index], ...patch }
  return body
}

describe('restoreRedacted', () => {
  it('puts the stored values back when nothing else changed', () => {
    const { input, unrestored } = restoreRedacted(readBack(), stored)
    expect(unrestored).toEqual([])
    expect(input.upstreams).toEqual(stored.upstreams)
  })

  it('keeps a placeholder and reports it when the endpoint changed', () => {
    const { input, unrestored } = restoreRedacted(withUpstream(0, { endpoint: 'https://attacker.example/' }), stored)
    expect(JSON.stringify(input)).not.toMatch(/pa55|cdn-secret/)
    expect(input.upstreams[0].credentials).toEqual({ username: REDACTED, password: REDACTED })
    expect(unrestored).toEqual([
      { path: 'upstreams[0].credentials.username', reason: 'endpoint_changed' },
      { path: 'upstreams[0].credentials.password', reason: 'endpoint_changed' },
      { path: 'upstreams[0].artifactCredentials[0].credentials.token', reason: 'endpoint_changed' },
    ])
  })

  it('does not follow an upstream id to another endpoint when ids are swapped', () => {
    const body = readBack()
    body.upstreams = [
      { ...body.upstreams[0], id: 'other' },
      { ...body.upstreams[1], id: 'legit' },
    ]
    const { input, unrestored } = restoreRedacted(body, stored)
    expect(JSON.stringify(input)).not.toMatch(/pa55|cdn-secret|other-secret/)
    expect(unrestored).toHaveLength(4)
  })

  it('does not carry an artifact token to another host', () => {
    const body = withUpstream(0, {
      artifactCredentials: [{ host: 'attacker.example', credentials: { token: REDACTED } }],
    })
    const { input, unrestored } = restoreRedacted(body, stored)
    expect(JSON.stringify(input)).not.toContain('cdn-secret')
    expect(unrestored).toEqual([{ path: 'upstreams[0].artifactCredentials[0].credentials.token', reason: 'no_value' }])
  })

  it('accepts real values for a new endpoint', () => {
    const fresh = { endpoint: 'https://new.example/', credentials: { token: 'fresh' }, artifactCredentials: undefined }
    const body = withUpstream(0, fresh)
    const { input, unrestored } = restoreRedacted(body, stored)
    expect(unrestored).toEqual([])
    expect(input.upstreams[0].credentials).toEqual({ token: 'fresh' })
  })

  it('reports a placeholder with nothing stored behind it (a new firewall)', () => {
    expect(restoreRedacted(readBack(), null).unrestored.every((entry) => entry.reason === 'no_value')).toBe(true)
  })
})

describe('refuseUnrestored', () => {
  const refusal = (reasons: ('no_value' | 'endpoint_changed')[]) => {
    try {
      refuseUnrestored(reasons.map((reason, i) => ({ path: `p${i}`, reason })))
    } catch (error) {
      return error as DomainError
    }
    return undefined
  }

  it('passes when every placeholder was restored', () => {
    expect(refusal([])).toBeUndefined()
  })

  it('says the credentials must be given again for the new endpoint', () => {
    const error = refusal(['no_value', 'endpoint_changed'])!
    expect(error).toBeInstanceOf(DomainError)
    expect(error.kind).toBe('invalid')
    expect(error.code).toBe('credentials_required_for_new_endpoint')
    expect(error.message).toContain('new endpoint')
    expect(error.details.errors).toHaveLength(2)
  })

  it('keeps the old code when nothing is stored', () => {
    expect(refusal(['no_value'])!.code).toBe('redacted_without_value')
  })
})
