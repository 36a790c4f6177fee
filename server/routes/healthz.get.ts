import { defineEventHandler } from 'h3'

/** Process up; no auth, no storage access. */
export default defineEventHandler(() => ({ status: 'ok' }))
