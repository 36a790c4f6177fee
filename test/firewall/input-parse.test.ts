import { describe, expect, it } from 'vitest'
import { parseFirewallInput } from '../../server/firewall/input-parse'
import { FirewallInput } from '../../server/firewall/schema'

/**
 * The firewall body parsed in parts (CONTRACT section 8: a 1 MiB body must not hold the loop) gives
 * what `FirewallInput.safeParse` gives: the same data, the same issues (path and message) in order.
 */

const rule = (i: number) => ({
  id: `r${i}`,
  executionPhase: 'download',
  selector: { function: { name: 'deprecated' } },
})
const rules = (n: number) => Array.from({ length: n }, (_, i) => rule(i))
const permissions = (n: number): Record<string, unknown> =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`user-${i}`, ['fw:read']]))

const issuesOf = (result: { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } }) =>
  result.success ? [] : result.error!.issues.map(({ path, message }) => ({ path, message }))

async function expectSame(body: unknown): Promise<{ path: PropertyKey[]; message: string }[]> {
  const whole = FirewallInput.safeParse(body)
  const parts = await parseFirewallInput(body)
  expect(parts.success).toBe(whole.success)
  if (whole.success && parts.success) expect(parts.data).toEqual(whole.data)
  expect(issuesOf(parts)).toEqual(issuesOf(whole))
  return issuesOf(parts)
}

describe('parseFirewallInput', () => {
  it('parses a large valid body (3,000 rules, 5,000 principals) as zod does', async () => {
    await expectSame({ ecosystem: 'npm', rules: rules(3000), permissions: permissions(5000), extends: ['base'] })
    await expectSame({ ecosystem: 'pypi', permissions: { ...permissions(2500), '17': ['fw:read'], constructor: [] } })
  })

  it('reports the issues of a large invalid body where and as zod does', async () => {
    const badRules = rules(1500)
    badRules[3] = { ...rule(3), executionPhase: 'never' } as never
    badRules[1205] = { id: '' } as never
    const badPermissions = permissions(3500)
    badPermissions['user-7'] = ['fw:everything']
    badPermissions['x'.repeat(200)] = ['fw:read']
    expect(await expectSame({ ecosystem: 'npm', rules: badRules, permissions: badPermissions })).toHaveLength(6)
    const mixed = await expectSame({ ecosystem: 'cargo', description: 7, rules: badRules, extends: [1], unknown: true })
    expect(mixed.map((issue) => issue.path[0] ?? '(root)')).toEqual([
      'ecosystem',
      'description',
      'rules',
      'rules',
      'rules',
      'rules',
      'extends',
      '(root)',
    ])
    expect(
      await expectSame({ ecosystem: 'npm', name: 5, permissions: badPermissions, extends: 'x', other: 1 }),
    ).toHaveLength(5)
  })

  it('refuses duplicate rule ids only when every rule parsed, as the schema refinement does', async () => {
    const duplicated = [...rules(500), rule(7)]
    expect(await expectSame({ rules: duplicated, exceptions: 'no' })).toEqual([
      { path: ['rules'], message: 'rule ids must be unique' },
      { path: ['exceptions'], message: expect.any(String) },
    ])
    expect(await expectSame({ rules: [...duplicated, { id: 'broken' }] })).not.toContainEqual(
      expect.objectContaining({ message: 'rule ids must be unique' }),
    )
  })

  it('stops at a __proto__ principal as zod does', async () => {
    const body = JSON.parse(`{"permissions":{"__proto__":["fw:read"],${'"a":["fw:read"],'.repeat(1)}"b":["nope"]}}`)
    const large = JSON.parse(
      JSON.stringify({ permissions: permissions(2000) }).replace('{"user-0"', '{"__proto__":[],"user-0"'),
    )
    await expectSame(body)
    await expectSame(large)
    expect(issuesOf(await parseFirewallInput(large))).toEqual([
      { path: ['permissions', '__proto__'], message: '"__proto__" is not a principal id' },
    ])
  })

  it('parses small bodies and what is not an object in one go', async () => {
    for (const body of [{ ecosystem: 'npm', rules: rules(3) }, null, [], 'x', { rules: 'no', permissions: [] }])
      await expectSame(body)
  })
})
