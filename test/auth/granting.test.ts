import { describe, expect, it } from 'vitest'
import { firstUngrantable, grantsAdded, requireMayGrant } from '../../server/auth/granting'
import { DomainError } from '../../server/common/errors'
import type { Principal } from '../../server/auth/principal'
import type { Firewall } from '../../server/firewall/schema'

const principal = (patch: Partial<Principal> = {}): Principal => ({
  type: 'user',
  id: 'mallory',
  namespace: 'default',
  tokenId: 'tok-1',
  tokenIdentifier: 'tid',
  teams: [],
  grants: [],
  owner: false,
  ...patch,
})
const firewall: Pick<Firewall, 'id' | 'permissions'> = {
  id: 'fw',
  permissions: { mallory: ['fw:read', 'fw:update:config'], 'team-ops': ['fw:update:rule'], everybody: ['fw:access'] },
}

describe('firstUngrantable', () => {
  it('names the first string the caller does not hold', () => {
    expect(firstUngrantable(principal(), firewall, ['fw:read', 'fw:delete', 'fw:clone'])).toBe('fw:delete')
  })

  it("counts the caller's own entry, its teams, everybody and namespace-level fw:* grants", () => {
    const caller = principal({ teams: ['team-ops'], grants: ['fw:clone', 'ns:webhooks:read'] })
    expect(firstUngrantable(caller, firewall, ['fw:read', 'fw:update:rule', 'fw:access', 'fw:clone'])).toBeUndefined()
    expect(firstUngrantable(principal(), firewall, ['fw:update:rule'])).toBe('fw:update:rule')
  })

  it('lets the namespace owner and ns:admin grant everything', () => {
    const all = ['fw:delete', 'fw:update:credentials'] as const
    expect(firstUngrantable(principal({ owner: true }), { permissions: {} }, all)).toBeUndefined()
    expect(firstUngrantable(principal({ grants: ['ns:admin'] }), { permissions: {} }, all)).toBeUndefined()
  })

  it('needs nothing when nothing is added', () => {
    expect(firstUngrantable(principal({ id: 'nobody' }), { permissions: {} }, [])).toBeUndefined()
  })
})

describe('requireMayGrant', () => {
  it('refuses with 403 naming the permission', () => {
    const wider = { ...firewall.permissions, mallory: ['fw:read' as const, 'fw:update:credentials' as const] }
    const added = grantsAdded(firewall.permissions, wider)
    let error: unknown
    try {
      requireMayGrant(principal(), firewall, added)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(DomainError)
    expect(error).toMatchObject({
      kind: 'forbidden',
      code: 'permission_denied',
      details: { permission: 'fw:update:credentials' },
    })
    expect((error as Error).message).toContain('cannot grant fw:update:credentials')
  })

  it('lets removals through', () => {
    expect(() => requireMayGrant(principal(), firewall, grantsAdded(firewall.permissions, {}))).not.toThrow()
  })
})
