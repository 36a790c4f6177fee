import { setResponseHeaders, type H3Event } from 'h3'

/**
 * The headers every dashboard answer carries: no framing (clickjacking of
 * approve, rotate and reveal buttons), no script, style or connection from anywhere but this
 * origin, no MIME sniffing, and no dashboard URL (ids, request ids) in a Referer sent elsewhere.
 * The pages are built for this policy: no inline script, style attribute or event handler.
 */
const DASHBOARD_CSP = [
  "default-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
].join('; ')

const DASHBOARD_HEADERS: Readonly<Record<string, string>> = {
  'x-frame-options': 'DENY',
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
}

/** Paths the dashboard serves: `/`, sign-in and sign-out (provider sign-in under `/auth/`), its assets and every page under `/namespaces`. */
function isDashboardPath(path: string): boolean {
  const pathname = path.split('?')[0]
  return (
    pathname === '/' ||
    pathname === '/sign-in' ||
    pathname === '/sign-out' ||
    pathname.startsWith('/auth/') ||
    pathname === '/namespaces' ||
    pathname.startsWith('/namespaces/') ||
    pathname.startsWith('/assets/')
  )
}

/** Sets the dashboard headers on a response about to be written (redirects and errors included). */
export function setDashboardHeaders(event: H3Event): void {
  if (isDashboardPath(event.path)) setResponseHeaders(event, DASHBOARD_HEADERS)
}
