import { defineNitroPlugin } from 'nitropack/runtime'
import { useServices } from '../app/runtime'
import { logger } from '../app/logger'
import { whenListening } from '../app/listening'
import { parseWebhookSettings } from '../webhooks/configuration/settings'
import { createWebhookRuntime, setWebhookRuntime } from '../webhooks/delivery/runtime'
import { startWebhookEngine, type WebhookEngine } from '../webhooks/delivery/engine'

/**
 * Composition root of the webhooks: parses the settings once (an invalid one stops the start),
 * builds the runtime the webhook API and engine share, starts the engine once storage is ready,
 * and stops it gracefully on close: no new work, the attempt in flight finishes, actors are
 * stored and leases released. Nitro does not await plugins, so start-up runs in the background.
 */
export default defineNitroPlugin((nitroApp) => {
  let settings
  try {
    settings = parseWebhookSettings(process.env)
  } catch (error) {
    logger.error('start-up failed', { error: String(error) })
    process.exit(1)
  }
  const runtime = useServices().then((services) => createWebhookRuntime(services, settings))
  setWebhookRuntime(runtime)
  const engine: Promise<WebhookEngine | null> = (async () => {
    const services = await useServices()
    // Leases only once this process owns its port: a duplicate start exits before taking any.
    await whenListening()
    return startWebhookEngine(services, await runtime)
  })().catch((error) => {
    logger.error('webhook engine failed to start', { error: String(error) })
    return null
  })
  nitroApp.hooks.hookOnce('close', async () => {
    await (await engine)?.stop()
  })
})
