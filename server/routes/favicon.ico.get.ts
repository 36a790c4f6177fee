import { defineEventHandler, setResponseHeaders } from 'h3'

// A shield in the dashboard's accent colour; browsers ask for /favicon.ico on every first visit.
const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path d="M16 2 4 7v8c0 8 5 13 12 15 7-2 12-7 12-15V7z" fill="#2f5d8a"/><path d="m11 16 4 4 7-8" stroke="#fff" stroke-width="3" fill="none"/></svg>`

/** The site icon (SVG), so no browser logs a 404 for it. */
export default defineEventHandler((event) => {
  setResponseHeaders(event, {
    'content-type': 'image/svg+xml',
    'cache-control': 'public, max-age=86400',
    'x-content-type-options': 'nosniff',
  })
  return ICON
})
