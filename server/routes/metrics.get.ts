import { defineEventHandler } from 'h3'
import { handleMetrics } from '../observability/metrics-endpoint'

/** Prometheus scrape endpoint; logic in server/observability/metrics-endpoint.ts. */
export default defineEventHandler((event) => handleMetrics(event))
