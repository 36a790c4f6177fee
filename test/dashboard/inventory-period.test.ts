import { describe, expect, it } from 'vitest'
import { sbomPeriod } from '../../server/dashboard/pages/inventory'

describe('the SBOM period of the inventory page', () => {
  it('takes whole UTC days, both included', () => {
    expect(sbomPeriod(new URLSearchParams({ since: '2026-11-01', until: '2026-11-26' }))).toEqual({
      since: '2026-11-01T00:00:00.000Z',
      until: '2026-11-26T23:59:59.999Z',
    })
  })

  it('leaves an empty field unbounded', () => {
    expect(sbomPeriod(new URLSearchParams({ since: '', until: '' }))).toEqual({ since: undefined, until: undefined })
  })

  it('refuses what is not a date, naming the field', () => {
    expect(() => sbomPeriod(new URLSearchParams({ since: '2026-13-45' }))).toThrow(/since is not a date/)
    expect(() => sbomPeriod(new URLSearchParams({ until: 'yesterday' }))).toThrow(/until is not a date/)
  })
})
