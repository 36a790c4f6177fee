import { defineEventHandler, setResponseStatus } from 'h3'
import type { Backend } from '../../storage'

/** What readiness uses: the storage's kind and ping, nothing of its data. */
export interface ReadinessPorts {
  storage: Pick<Backend, 'kind' | 'ping'>
}

/**
 * `GET /readyz`: 200 when storage answers a ping, 503 when not; no auth.
 * @example export default createReadinessHandler(useServices)
 */
export function createReadinessHandler(services: () => Promise<ReadinessPorts>) {
  return defineEventHandler(async (event) => {
    const { storage } = await services()
    const ok = await storage.ping()
    if (!ok) setResponseStatus(event, 503)
    return { status: ok ? 'ready' : 'storage unreachable', storage: storage.kind }
  })
}
