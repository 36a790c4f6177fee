import { defineEventHandler, setResponseStatus } from 'h3'
import { useServices } from '../app/runtime'

/** Storage reachable; no auth. */
export default defineEventHandler(async (event) => {
  const services = await useServices()
  const ok = await services.storage.ping()
  if (!ok) setResponseStatus(event, 503)
  return { status: ok ? 'ready' : 'storage unreachable', storage: services.storage.kind }
})
