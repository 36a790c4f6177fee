import { ECOSYSTEMS, type Ecosystem } from '../firewall/schema'
import { EMPTY_ADVISORY_INDEX } from './index-build'
import { advisoryStatus, type AdvisoryStatus } from './status'
import type { AdvisoryMatches } from './types'

/**
 * What a rule asks of advisory data: the advisories of one package version. Throws (503, Retry-After)
 * when the ecosystem's data is configured but not loaded, so a rule never decides on no data.
 */
export interface AdvisoryLookup {
  lookup(ecosystem: Ecosystem, name: string, version: string): AdvisoryMatches
}

/**
 * The one port through which the rules (through `EvaluationContext.advisories`), the registry, the
 * API and the dashboard read advisory data. The catalogue (`catalog.ts`: `ADVISORY_DIR` and the OSV
 * feed) implements it; the composition root (`server/plugins/00.services.ts`) builds it and hands it
 * over as `Services.advisories`. Tests give their own.
 */
export interface AdvisoryPort {
  /** The data now: one object until it changes, so caches may key on it. */
  current(): AdvisoryLookup
  /** Resolves after the first load attempt; the registry answers nothing before it. */
  ready: Promise<void>
  /** Figures for `GET /v1/{ns}/advisories/status` and the dashboard's warning. */
  status(): AdvisoryStatus
}

/**
 * A port over data the caller holds (tests, benches, a process without advisories): no feed and no
 * directory in its status. `current` is asked at every request, so a caller may swap the data.
 * @example createServices(backend, { advisories: fixedAdvisories(() => index) })
 */
export function fixedAdvisories(current: () => AdvisoryLookup = () => EMPTY_ADVISORY_INDEX): AdvisoryPort {
  return {
    current,
    ready: Promise.resolve(),
    status: () =>
      advisoryStatus({
        now: Date.now(),
        feedEnabled: false,
        refresh: 'off',
        refreshMs: 0,
        dir: { configured: false, loaded: false, index: null },
        feed: ECOSYSTEMS.map((ecosystem) => ({ ecosystem, index: null, state: null })),
      }),
  }
}
