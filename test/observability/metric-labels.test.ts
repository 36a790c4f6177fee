import { describe, expect, it } from 'vitest'
import { observeUpstream, renderMetrics, UPSTREAM_HOST_LABELS } from '../../server/observability/metrics'
import { parseExposition } from './prom-text'

describe('metric label bounds (#30)', () => {
  it('keeps at most its bound of upstream host series; further hosts share "other"', async () => {
    for (let i = 0; i < UPSTREAM_HOST_LABELS + 300; i++) observeUpstream(`upstream-${i}.example`, 0.01, 'timeout')
    const text = (await renderMetrics()).body
    const hosts = new Set(
      parseExposition(text)
        .samples.filter((sample) => sample.name === 'registry_upstream_errors_total')
        .map((sample) => sample.labels.upstream),
    )
    expect(hosts.size).toBe(UPSTREAM_HOST_LABELS + 1)
    expect(hosts.has('other')).toBe(true)
  })
})
