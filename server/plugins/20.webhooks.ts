import { defineNitroPlugin } from 'nitropack/runtime'
import { useServices } from '../app/runtime'
import { logger } from '../app/logger'
import { whenListening } from '../app/listening'
import { startWebhookEngine, type WebhookEngine } from '../webhooks/delivery/engine'

/**
 * Starts the webhook engine over the runtime the services plugin built (00.services.ts) once
 * storage is ready, and stops it gracefully on close: no new work, the attempt in flight
 * finishes, actors are stored and leases released. Nitro does not await plugins, so start-up
 * runs in the background.
 */
export default defineNitroPlugin((nitroApp) => {
  const engine: Promise<WebhookEngine | null> = (async () => {
    const services = await useServices()
    // Leases only once this process owns its port: a duplicate start exits before taking any.
    await whenListening()
    return startWebhookEngine(services, services.webhookRuntime)
  })().catch((error) => {
    logger.error('webhook engine failed to start', { error: String(error) })
    return null
  })
  nitroApp.hooks.hookOnce('close', async () => {
    await (await engine)?.stop()
  })
})
