import { describe, expect, it } from 'vitest'
import { cvss3BaseScore, severityFromScore } from '../../server/advisories/cvss'

describe('cvss3BaseScore', () => {
  it('scores the all-high network vector 9.8', () => {
    expect(cvss3BaseScore('CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H')).toBe(9.8)
  })

  it('scores a scope-changed low-impact vector 6.4', () => {
    expect(cvss3BaseScore('CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:C/C:L/I:L/A:N')).toBe(6.4)
  })

  it('caps a scope-changed all-high vector at 10.0', () => {
    expect(cvss3BaseScore('CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H')).toBe(10)
  })

  it('scores a typical reflected XSS vector 6.1', () => {
    expect(cvss3BaseScore('CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N')).toBe(6.1)
  })

  it('scores a local high-complexity availability-only vector 4.7', () => {
    expect(cvss3BaseScore('CVSS:3.1/AV:L/AC:H/PR:L/UI:N/S:U/C:N/I:N/A:H')).toBe(4.7)
  })

  it('scores a vector without impact 0', () => {
    expect(cvss3BaseScore('CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:N')).toBe(0)
  })

  it('accepts CVSS 3.0 vectors', () => {
    expect(cvss3BaseScore('CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H')).toBe(9.8)
  })

  it('ignores temporal metrics after the base metrics', () => {
    expect(cvss3BaseScore('CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H/E:U/RL:O')).toBe(9.8)
  })

  it('returns null for a CVSS v4 vector', () => {
    expect(cvss3BaseScore('CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N')).toBeNull()
  })

  it('returns null when a base metric is missing', () => {
    expect(cvss3BaseScore('CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H')).toBeNull()
  })

  it('returns null for an unknown metric value', () => {
    expect(cvss3BaseScore('CVSS:3.1/AV:X/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H')).toBeNull()
  })
})

describe('severityFromScore', () => {
  it.each([
    [0, 'low'],
    [3.9, 'low'],
    [4.0, 'moderate'],
    [6.9, 'moderate'],
    [7.0, 'high'],
    [8.9, 'high'],
    [9.0, 'critical'],
    [10, 'critical'],
  ])('maps %s to %s', (score, severity) => {
    expect(severityFromScore(score)).toBe(severity)
  })
})
