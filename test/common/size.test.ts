import { describe, expect, it } from 'vitest'
import { parseSize } from '../../server/common/size'
import { parseUpstreamSizeSettings } from '../../server/net/upstream-settings'

describe('sizes as the operator writes them', () => {
  it('reads bytes and binary units', () => {
    expect([parseSize('512'), parseSize('512KB'), parseSize('64MB'), parseSize('1gb')]).toEqual([
      512,
      512 * 1024,
      64 * 1024 * 1024,
      1024 ** 3,
    ])
  })

  it('refuses anything else', () => {
    for (const text of ['', '0', '-1MB', '1.5MB', '64 M', 'lots']) expect(() => parseSize(text)).toThrow(/invalid size/)
  })

  it('UPSTREAM_MAX_BODY and UPSTREAM_MAX_ARTIFACT default to 64MB and 512MB and name themselves when invalid', () => {
    expect(parseUpstreamSizeSettings({})).toEqual({ metadata: 64 * 1024 ** 2, artifact: 512 * 1024 ** 2 })
    expect(parseUpstreamSizeSettings({ UPSTREAM_MAX_BODY: '1MB' }).metadata).toBe(1024 ** 2)
    expect(() => parseUpstreamSizeSettings({ UPSTREAM_MAX_ARTIFACT: 'huge' })).toThrow(/^UPSTREAM_MAX_ARTIFACT: /)
  })
})
