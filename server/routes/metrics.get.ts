import { useServices } from '../app/runtime'
import { createMetricsHandler } from '../observability/metrics-endpoint'

/** Prometheus scrape endpoint; logic in server/observability/metrics-endpoint.ts. */
export default createMetricsHandler(useServices)
