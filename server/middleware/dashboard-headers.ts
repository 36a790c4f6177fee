import { defineEventHandler } from 'h3'
import { setDashboardHeaders } from '../dashboard/security-headers'

/**
 * The one place dashboard answers get their security headers: before any route runs, so pages,
 * redirects, error pages, assets and live streams all carry them (logic: dashboard/security-headers.ts).
 */
export default defineEventHandler((event) => {
  setDashboardHeaders(event)
})
