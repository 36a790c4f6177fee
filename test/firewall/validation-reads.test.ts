import { describe, expect, it } from 'vitest'
import { DomainError } from '../../server/common/errors'
import type { Firewall, Rule } from '../../server/firewall/schema'
import { validateFirewall, type FirewallValidationContext } from '../../server/firewall/validation'
import { configFromEnv } from '../../server/app/config'
import { emptyFirewall } from '../support/documents'

/**
 * `validateFirewall` reads the namespace's license sets and firewalls only for a configuration that
 * names a license set or a base (#27: a rule upsert read both, every firewall of the namespace
 * parsed, for a firewall naming neither), and judges exactly as with both read beforehand.
 */
const byName: Rule = {
  id: 'names',
  executionPhase: 'download',
  selector: { function: { name: 'packageName', patterns: ['evil-*'] } },
  ruleEffect: { block: true, log: true },
} as Rule
const byLicense = (id: string, licenseSet: string): Rule =>
  ({
    id,
    executionPhase: 'download',
    selector: { function: { name: 'license', licenseSet, mode: 'deny' } },
    ruleEffect: { block: true, log: true },
  }) as Rule

/** A context whose license sets and firewalls are read on demand, counting the reads. */
function lazyContext(sets: string[], firewalls: Firewall[]) {
  const reads = { licenseSets: 0, firewalls: 0 }
  const context: FirewallValidationContext = {
    id: 'fw',
    previous: null,
    startsFrom: null,
    rules: 'all',
    licenseSetIds: async () => (reads.licenseSets++, new Set(sets)),
    firewalls: async () => (reads.firewalls++, new Map(firewalls.map((fw) => [fw.id, fw]))),
    readable: () => true,
    upstreamAddresses: configFromEnv({}).upstreamAddresses,
  }
  return { context, reads }
}

const config = (rules: Rule[], bases: string[] = []) => ({
  ecosystem: 'npm' as const,
  upstreams: [],
  exceptions: [],
  extends: bases,
  rules,
})

async function refusal(promise: Promise<unknown>): Promise<DomainError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(DomainError)
  return error as DomainError
}

describe('what validateFirewall reads', () => {
  it('reads neither license sets nor firewalls for rules without license sets and no bases', async () => {
    const { context, reads } = lazyContext([], [])
    await expect(validateFirewall(config([byName]), context)).resolves.toBeUndefined()
    expect(reads).toEqual({ licenseSets: 0, firewalls: 0 })
  })

  it('reads the license sets once for the rules that name them, and refuses an unknown one', async () => {
    const { context, reads } = lazyContext(['ls-known'], [])
    await expect(
      validateFirewall(config([byLicense('a', 'ls-known'), byName, byLicense('b', 'ls-known')]), context),
    ).resolves.toBeUndefined()
    const refused = await refusal(validateFirewall(config([byName, byLicense('c', 'ls-gone')]), context))
    expect(refused.code).toBe('invalid_reference')
    expect(refused.details.errors).toEqual([{ path: 'rules[1].selector', message: 'unknown license set "ls-gone"' }])
    expect(reads).toEqual({ licenseSets: 2, firewalls: 0 })
  })

  it('reads the firewalls for a configuration with bases, and judges them as before', async () => {
    const base = { ...emptyFirewall('base'), rules: [byName] } as Firewall
    const { context, reads } = lazyContext([], [base])
    await expect(validateFirewall(config([], ['base']), context)).resolves.toBeUndefined()
    const refused = await refusal(validateFirewall(config([], ['base', 'missing']), context))
    expect(refused.details.errors).toEqual([{ path: 'extends[1]', message: 'unknown firewall "missing"' }])
    expect(reads).toEqual({ licenseSets: 0, firewalls: 2 })
  })

  it('takes values read beforehand as they are', async () => {
    const { context } = lazyContext([], [])
    const refused = await refusal(
      validateFirewall(config([byLicense('a', 'ls-x')], ['nope']), {
        ...context,
        licenseSetIds: new Set(['ls-other']),
        firewalls: new Map(),
      }),
    )
    expect(refused.details.errors).toEqual([
      { path: 'rules[0].selector', message: 'unknown license set "ls-x"' },
      { path: 'extends[0]', message: 'unknown firewall "nope"' },
    ])
  })
})
