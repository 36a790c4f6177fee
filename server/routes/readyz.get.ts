import { useServices } from '../app/runtime'
import { createReadinessHandler } from '../observability/readiness'

/** Storage reachable; no auth (server/observability/readiness.ts). */
export default createReadinessHandler(useServices)
