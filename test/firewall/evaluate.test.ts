import { describe, expect, it } from 'vitest'
import { decisionEventType, evaluate, type FirewallLayer } from '../../server/firewall/rules/evaluate'
import { FirewallDecisionData } from '../../server/events/schemas'
import { context, exception, facts, firewall, NOW, osvRecord, rule, sel } from './fixtures'

const ctx = context()
const blockLeftPad = rule('no-left-pad', sel.name('left-pad'))
const own = (rules = [blockLeftPad], exceptions: ReturnType<typeof exception>[] = []): FirewallLayer[] => [
  { firewall: firewall('team', 3, rules, exceptions) },
]

describe('evaluate outcomes', () => {
  it('allows when no rule matches', () => {
    expect(evaluate(own([rule('x', sel.name('other'))]), ['download'], facts(), ctx)).toMatchObject({
      outcome: 'allowed',
      matches: [],
      message: 'no rule matched',
    })
  })

  it('blocks on a matching blocking rule', () => {
    const decision = evaluate(own(), ['download'], facts(), ctx)
    expect([decision.outcome, decision.rule?.id, decision.message]).toEqual([
      'blocked',
      'no-left-pad',
      'rule no-left-pad',
    ])
  })

  it('names the deciding firewall and version', () => {
    expect(evaluate(own(), ['download'], facts(), ctx)).toMatchObject({ firewall: 'team', firewallVersion: 3 })
  })

  it('ignores rules of other phases', () => {
    const uploadOnly = rule('u', sel.name('left-pad'), { executionPhase: 'upload' })
    expect(evaluate(own([uploadOnly]), ['download', 'versions'], facts(), ctx).outcome).toBe('allowed')
  })

  it('counts a versions-phase rule in a download decision', () => {
    const versions = rule('v', sel.name('left-pad'), { executionPhase: 'versions' })
    expect(evaluate(own([versions]), ['download', 'versions'], facts(), ctx).outcome).toBe('blocked')
  })

  it('logs a non-blocking logging rule', () => {
    const logOnly = rule('watch', sel.name('left-pad'), { ruleEffect: { block: false, log: true } })
    expect(evaluate(own([logOnly]), ['download'], facts(), ctx)).toMatchObject({
      outcome: 'logged',
      rule: { id: 'watch' },
    })
  })

  it('allows silently on a rule that neither blocks nor logs', () => {
    const silent = rule('silent', sel.name('left-pad'), { ruleEffect: { block: false, log: false } })
    expect(evaluate(own([silent]), ['download'], facts(), ctx).outcome).toBe('allowed')
  })

  it('prefers a block over an earlier logging rule', () => {
    const logOnly = rule('watch', sel.name('left-pad'), { ruleEffect: { block: false, log: true } })
    expect(evaluate(own([logOnly, blockLeftPad]), ['download'], facts(), ctx).rule?.id).toBe('no-left-pad')
  })

  it('lists every matching rule', () => {
    const second = rule('second', sel.range('left-pad', '1.x'))
    expect(evaluate(own([blockLeftPad, second]), ['download'], facts(), ctx).matches.map((m) => m.id)).toEqual([
      'no-left-pad',
      'second',
    ])
  })

  it('carries the selector output and falls back to its message without a description', () => {
    const malwareCtx = context({ records: [osvRecord('MAL-1', 'left-pad', { summary: 'bad' })] })
    const decision = evaluate(own([rule('mal', sel.malware(), { description: '' })]), ['download'], facts(), malwareCtx)
    expect([decision.output?.signals, decision.message]).toEqual([
      ['MAL-1'],
      'malicious package: bad (MAL-1, https://osv.dev/vulnerability/MAL-1)',
    ])
  })
})

describe('evaluate exceptions', () => {
  it('allows an excepted block as exception-allowed', () => {
    const decision = evaluate(
      own([blockLeftPad], [exception('ok', 'no-left-pad', { packageName: 'left-pad' })]),
      ['download'],
      facts(),
      ctx,
    )
    expect([decision.outcome, decision.rule?.id, decision.exception?.id]).toEqual([
      'exception-allowed',
      'no-left-pad',
      'ok',
    ])
  })

  it('blocks again once the exception has expired', () => {
    const expiring = exception('ok', 'no-left-pad', { packageName: 'left-pad' }, { expires: '2025-06-01T12:00:00Z' })
    const later = context({ now: NOW + 24 * 3_600_000 })
    expect(evaluate(own([blockLeftPad], [expiring]), ['download'], facts(), later).outcome).toBe('blocked')
  })

  it('still allows before the expiry', () => {
    const expiring = exception('ok', 'no-left-pad', { packageName: 'left-pad' }, { expires: '2025-06-01T12:00:00Z' })
    expect(evaluate(own([blockLeftPad], [expiring]), ['download'], facts(), ctx).outcome).toBe('exception-allowed')
  })

  it('blocks when another blocking rule is not excepted', () => {
    const second = rule('young', sel.age('72h'))
    const decision = evaluate(
      own([blockLeftPad, second], [exception('ok', 'no-left-pad', { packageName: 'left-pad' })]),
      ['download'],
      facts(),
      ctx,
    )
    expect([decision.outcome, decision.rule?.id]).toEqual(['blocked', 'young'])
  })

  it('does not apply an exception for another version', () => {
    const pinned = exception('ok', 'no-left-pad', { packageName: 'left-pad', version: '1.0.0' })
    expect(evaluate(own([blockLeftPad], [pinned]), ['download'], facts(), ctx).outcome).toBe('blocked')
  })

  it('silences an excepted logging rule', () => {
    const logOnly = rule('watch', sel.name('left-pad'), { ruleEffect: { block: false, log: true } })
    expect(
      evaluate(own([logOnly], [exception('ok', 'watch', { packageName: 'left-pad' })]), ['download'], facts(), ctx)
        .outcome,
    ).toBe('allowed')
  })
})

describe('evaluate inheritance', () => {
  const base = firewall('org-base', 7, [rule('no-malware', sel.name('left-pad'))])
  const chain = (
    exceptions: ReturnType<typeof exception>[] = [],
    baseExceptions: ReturnType<typeof exception>[] = [],
  ): FirewallLayer[] => [
    { firewall: firewall('team', 3, [], exceptions) },
    { firewall: { ...base, exceptions: baseExceptions }, inheritedFrom: { id: 'org-base', version: 7 } },
  ]

  it('applies an inherited rule with its source fields', () => {
    expect(evaluate(chain(), ['download'], facts(), ctx).rule).toMatchObject({
      id: 'no-malware',
      source: 'org-base',
      sourceFirewall: 'org-base',
      sourceFirewallVersion: 7,
    })
  })

  it('omits source fields for the firewall own rule', () => {
    expect(Object.keys(evaluate(own(), ['download'], facts(), ctx).rule ?? {})).not.toContain('sourceFirewall')
  })

  it('lets an own exception except an inherited rule without exception source fields', () => {
    const decision = evaluate(
      chain([exception('mine', 'no-malware', { packageName: 'left-pad' })]),
      ['download'],
      facts(),
      ctx,
    )
    expect([decision.outcome, decision.exception?.exceptionSourceFirewall]).toEqual(['exception-allowed', undefined])
  })

  it('reports the source of an inherited exception', () => {
    const decision = evaluate(
      chain([], [exception('base-ok', 'no-malware', { packageName: 'left-pad' })]),
      ['download'],
      facts(),
      ctx,
    )
    expect(decision.exception).toMatchObject({
      id: 'base-ok',
      exceptionSourceFirewall: 'org-base',
      exceptionSourceFirewallVersion: 7,
    })
  })

  it('produces fields that fit the firewall event schema', () => {
    const decision = evaluate(chain(), ['download'], facts(), ctx)
    const { id, source, sourceFirewall, sourceFirewallVersion } = decision.rule!
    const data = {
      firewall: decision.firewall,
      firewallVersion: decision.firewallVersion,
      executionPhase: 'download',
      blocked: true,
      ecosystem: 'npm',
      packageName: 'left-pad',
      version: '1.3.0',
      upstream: 'npmjs',
      rule: id,
      user: 'u1',
      request: 'req-1',
      message: decision.message,
      source,
      sourceFirewall,
      sourceFirewallVersion,
    }
    expect(FirewallDecisionData.safeParse(data).success).toBe(true)
  })
})

describe('decisionEventType', () => {
  it('emits firewall.blocked for a block', () => {
    expect(decisionEventType(evaluate(own(), ['download'], facts(), ctx))).toBe('firewall.blocked')
  })

  it('emits firewall.exception-allowed for an excepted block', () => {
    const decision = evaluate(
      own([blockLeftPad], [exception('ok', 'no-left-pad', { packageName: 'left-pad' })]),
      ['download'],
      facts(),
      ctx,
    )
    expect(decisionEventType(decision)).toBe('firewall.exception-allowed')
  })

  it('emits nothing for an excepted block whose exception does not log', () => {
    const quiet = exception('ok', 'no-left-pad', { packageName: 'left-pad' }, { log: false })
    expect(decisionEventType(evaluate(own([blockLeftPad], [quiet]), ['download'], facts(), ctx))).toBeNull()
  })

  it('emits firewall.allowed for a logged match', () => {
    const logOnly = rule('watch', sel.name('left-pad'), { ruleEffect: { block: false, log: true } })
    expect(decisionEventType(evaluate(own([logOnly]), ['download'], facts(), ctx))).toBe('firewall.allowed')
  })

  it('emits nothing for a plain allow', () => {
    expect(decisionEventType(evaluate(own([]), ['download'], facts(), ctx))).toBeNull()
  })
})
