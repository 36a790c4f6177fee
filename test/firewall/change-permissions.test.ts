import { describe, expect, it } from 'vitest'
import { permissionsForChange, summarizeChange, touchesCredentials } from '../../server/firewall/diff'
import { endpointsMovedWithSecrets, sameEndpoint } from '../../server/firewall/credential-binding'
import { grantsAdded } from '../../server/auth/granting'
import type { Firewall, FirewallPermission, Upstream } from '../../server/firewall/schema'
import { CountingSlice } from '../support/counting-slice'

const up = (id: string, endpoint: string, extra: Partial<Upstream> = {}): Upstream => ({
  id,
  endpoint,
  internal: false,
  cached: false,
  ...extra,
})
const token = (value: string) => ({ credentials: { token: value } })
const artifact = (host: string, value: string) => ({ artifactCredentials: [{ host, credentials: { token: value } }] })

const base: Firewall = {
  id: 'fw',
  version: 3,
  ecosystem: 'npm',
  name: 'fw',
  description: '',
  rules: [],
  exceptions: [],
  extends: [],
  updatedAt: '2024-01-01T00:00:00Z',
  upstreams: [up('legit', 'https://registry.example/npm/', token('s3cret')), up('plain', 'https://public.example/')],
  permissions: { mallory: ['fw:read', 'fw:update:config'], 'team-ops': ['fw:read'] },
}
const change = (patch: Partial<Firewall>): Firewall => ({ ...base, ...patch })
const upstreams = (...list: Upstream[]) => change({ upstreams: list })

/** What each change needs on the firewall (permissionsForChange) and which grants it adds (grantsAdded). */
const TABLE: { name: string; after: Firewall; needs: FirewallPermission[]; grants?: FirewallPermission[] }[] = [
  { name: 'nothing', after: base, needs: [] },
  { name: 'description', after: change({ description: 'x' }), needs: ['fw:update:config'] },
  {
    name: 'self-grant of fw:delete',
    after: change({ permissions: { ...base.permissions, mallory: ['fw:read', 'fw:update:config', 'fw:delete'] } }),
    needs: ['fw:update:config'],
    grants: ['fw:delete'],
  },
  {
    name: 'grant to everybody',
    after: change({ permissions: { ...base.permissions, everybody: ['fw:access', 'fw:read'] } }),
    needs: ['fw:update:config'],
    grants: ['fw:access', 'fw:read'],
  },
  {
    name: 'moving a string from a team to a user adds it for the user',
    after: change({ permissions: { mallory: ['fw:read', 'fw:update:config'], alice: ['fw:read'] } }),
    needs: ['fw:update:config'],
    grants: ['fw:read'],
  },
  {
    name: 'removing a grant',
    after: change({ permissions: { mallory: ['fw:read'] } }),
    needs: ['fw:update:config'],
    grants: [],
  },
  {
    name: 'reordering a grant list adds nothing',
    after: change({ permissions: { ...base.permissions, mallory: ['fw:update:config', 'fw:read'] } }),
    needs: ['fw:update:config'],
    grants: [],
  },
  {
    name: 'endpoint of an upstream with credentials',
    after: upstreams(up('legit', 'https://attacker.example/', token('s3cret')), base.upstreams[1]),
    needs: ['fw:update:config', 'fw:update:credentials'],
  },
  {
    name: 'path of an upstream with credentials (same host)',
    after: upstreams(up('legit', 'https://registry.example/other/', token('s3cret')), base.upstreams[1]),
    needs: ['fw:update:config', 'fw:update:credentials'],
  },
  {
    name: 'endpoint spelled differently but the same URL',
    after: upstreams(up('legit', 'https://REGISTRY.example:443/npm/', token('s3cret')), base.upstreams[1]),
    needs: ['fw:update:config'],
  },
  {
    name: 'endpoint of an upstream without secrets',
    after: upstreams(base.upstreams[0], up('plain', 'https://attacker.example/')),
    needs: ['fw:update:config'],
  },
  {
    name: 'swapping the endpoints of two upstream ids',
    after: upstreams(
      up('legit', 'https://public.example/', token('s3cret')),
      up('plain', 'https://registry.example/npm/'),
    ),
    needs: ['fw:update:config', 'fw:update:credentials'],
  },
  {
    name: 'moving the secret to another upstream id',
    after: upstreams(
      up('legit', 'https://registry.example/npm/'),
      up('plain', 'https://public.example/', token('s3cret')),
    ),
    needs: ['fw:update:config', 'fw:update:credentials'],
  },
  {
    name: 'removing an upstream with credentials',
    after: upstreams(base.upstreams[1]),
    needs: ['fw:update:config', 'fw:update:credentials'],
  },
  {
    name: 'a new upstream reusing the id of one with credentials elsewhere',
    after: upstreams(up('legit', 'https://attacker.example/', { internal: true, ...token('s3cret') })),
    needs: ['fw:update:config', 'fw:update:credentials'],
  },
  {
    name: 'adding an upstream without secrets',
    after: upstreams(...base.upstreams, up('mirror', 'https://attacker.example/')),
    needs: ['fw:update:config'],
  },
  {
    name: 'adding an upstream with credentials',
    after: upstreams(...base.upstreams, up('mirror', 'https://mirror.example/', token('fresh'))),
    needs: ['fw:update:config', 'fw:update:credentials'],
  },
  {
    name: 'a rule',
    after: change({
      rules: [
        {
          id: 'r',
          executionPhase: 'download',
          selector: { function: { name: 'malware' } },
          ruleEffect: { block: true, log: true },
          description: '',
        },
      ],
    }),
    needs: ['fw:update:rule'],
  },
]

describe('what a change needs', () => {
  for (const row of TABLE) {
    it(row.name, async () => {
      expect((await permissionsForChange(base, row.after)).sort()).toEqual([...row.needs].sort())
      expect(grantsAdded(base.permissions, row.after.permissions).sort()).toEqual([...(row.grants ?? [])].sort())
    })
  }

  it('an upstream with only artifact credentials is bound to its endpoint too', async () => {
    const before = upstreams(up('legit', 'https://registry.example/npm/', artifact('cdn.example', 'cdn-secret')))
    const after = upstreams(up('legit', 'https://attacker.example/', artifact('cdn.example', 'cdn-secret')))
    expect(endpointsMovedWithSecrets(before.upstreams, after.upstreams)).toEqual(['legit'])
    expect(await permissionsForChange(before, after)).toContain('fw:update:credentials')
  })

  it('an artifact token under another host is a credentials change', async () => {
    const before = upstreams(up('legit', 'https://registry.example/npm/', artifact('cdn.example', 'cdn-secret')))
    const after = upstreams(up('legit', 'https://registry.example/npm/', artifact('attacker.example', 'cdn-secret')))
    expect(touchesCredentials(before, after)).toBe(true)
    expect(await permissionsForChange(before, after)).toEqual(['fw:update:config', 'fw:update:credentials'])
  })

  it('a rollback to an older endpoint that keeps the current credentials needs fw:update:credentials', async () => {
    const older = upstreams(up('legit', 'https://old.example/', token('s3cret')), base.upstreams[1])
    expect(await permissionsForChange(base, older)).toEqual(['fw:update:config', 'fw:update:credentials'])
  })

  it('grants under keys named after Object.prototype members count as new', () => {
    expect(grantsAdded({}, { constructor: ['fw:delete'], __proto__: ['fw:read'] } as never)).toEqual(['fw:delete'])
    const parsed = JSON.parse('{"constructor":["fw:delete"],"__proto__":["fw:read"]}')
    expect(grantsAdded({}, parsed)).toEqual(['fw:delete', 'fw:read'])
  })

  it('sameEndpoint compares normalised URLs and never throws', () => {
    expect(sameEndpoint('https://a.example/x', 'https://A.example/x')).toBe(true)
    expect(sameEndpoint('https://a.example/x', 'https://a.example/x/')).toBe(false)
    expect(sameEndpoint('http://a.example/', 'https://a.example/')).toBe(false)
    expect(sameEndpoint('not a url', 'https://a.example/')).toBe(false)
  })
})

describe('the comparison of the largest configurations (47,500 principals, 9,000 rules)', () => {
  const principals = (last: FirewallPermission[]): Firewall['permissions'] =>
    Object.fromEntries(Array.from({ length: 47_500 }, (_, i) => [`u${i}`, i === 47_499 ? last : ['fw:read']]))
  const rules = (lastId: string) =>
    Array.from({ length: 9000 }, (_, i) => ({
      id: i === 8999 ? lastId : `r${i}`,
      executionPhase: 'download' as const,
      selector: { function: { name: 'deprecated' as const } },
      ruleEffect: { block: true, log: true },
      description: '',
    }))

  it('takes turns member by member and finds a change in the last member', async () => {
    const before = change({ permissions: principals(['fw:read']), rules: rules('r8999') as Firewall['rules'] })
    const same = change({ permissions: principals(['fw:read']), rules: rules('r8999') as Firewall['rules'] })
    const slice = new CountingSlice()
    expect(await summarizeChange(before, same, slice)).toBe('no change')
    expect(await permissionsForChange(before, same, slice)).toEqual([])
    expect(slice.pauses).toBeGreaterThanOrEqual(2 * (47_500 + 9000))
    const granted = change({ ...same, permissions: principals(['fw:delete']) })
    expect(await permissionsForChange(before, granted, new CountingSlice())).toEqual(['fw:update:config'])
    const renamed = change({ ...same, rules: rules('last') as Firewall['rules'] })
    expect(await summarizeChange(before, renamed, new CountingSlice())).toBe('rule last added; rule r8999 removed')
    expect(await permissionsForChange(before, renamed, new CountingSlice())).toEqual(['fw:update:rule'])
  })
})
