import { defineNitroPlugin } from 'nitropack/runtime'
import type { H3Event } from 'h3'
import { backendOptionsFromEnv, openBackend } from '../../storage'
import { createServices } from '../app/services'
import { setServices, type AppServices } from '../app/runtime'
import { bootstrap } from '../app/bootstrap'
import { logger } from '../app/logger'
import { createAdvisoryCatalogOf } from '../advisories/catalog'
import { configFromEnv } from '../app/config'
import { whenListening } from '../app/listening'
import { secureDataDir } from '../../storage/data-dir'
import { verifySecretsKey } from '../../storage/secrets/key-check'
import { parseWebhookSettings } from '../webhooks/configuration/settings'
import { createWebhookRuntime } from '../webhooks/delivery/runtime'
import { parseOidcSettings } from '../auth/oidc/settings'
import { OidcClient } from '../auth/oidc/client'
import { ExposureDetector } from '../exposures/detector'
import { RequestsInFlight } from '../observability/requests-in-flight'
import { setRequestCountEnd } from '../app/request-context'

/**
 * Composition root: storage is chosen at run time (a Redis Cluster when REDIS_CLUSTER_NODES is
 * set, one Redis when REDIS_URL is, else the fs driver in ./.data) and migrated to the current
 * layout, then the bootstrap runs. The webhook settings are parsed once, before anything starts
 * (an invalid one stops the start), and the webhook runtime the API and engine share is built
 * over the services. Requests await the ready promise.
 */
export default defineNitroPlugin((nitroApp) => {
  let config
  let webhookSettings
  let oidcSettings
  try {
    // Every operator setting, read once (server/app/config.ts): an invalid one stops the start here.
    config = configFromEnv(process.env)
    webhookSettings = parseWebhookSettings(process.env)
    // OidcSettingError names the OIDC_* variable; the issuer itself is discovered below.
    oidcSettings = parseOidcSettings(process.env)
  } catch (error) {
    logger.error('start-up failed', { error: String(error) })
    process.exit(1)
  }
  // Every request counts from its first moment, also while storage is still being mounted; webhook
  // delivery gives way to them (Services.requests). Inside the observability plugin's request context,
  // so a caller refused for lack of a token stops counting (edge.ts).
  const requests = new RequestsInFlight()
  const inner = nitroApp.h3App.handler
  nitroApp.h3App.handler = ((event: H3Event) => {
    // Counted until the handler settles or the response closes (or a live stream says it is handled).
    const done = requests.started(event.node.res)
    setRequestCountEnd(done)
    event.node.res.once('close', done)
    return inner(event).finally(done)
  }) as typeof inner
  // The advisory port of rules and the registry: ADVISORY_DIR and the OSV feed.
  const advisories = createAdvisoryCatalogOf(config.advisories)
  const ready = (async (): Promise<AppServices> => {
    // Stored data of an older layout is migrated before anything reads it (storage/migrations/).
    const backend = await openBackend(backendOptionsFromEnv(process.env), {
      onStep: (step, changed) =>
        logger.info('storage layout migrated', { step: step.name, layout: step.version, keys: changed }),
    })
    const services = createServices(backend, { config, advisories, requests })
    if (backend.kind === 'local') {
      const dir = secureDataDir(services.config.dataDir)
      if (dir.error)
        logger.warn('data directory could not be made private (0700)', { path: dir.path, error: dir.error })
      else if (dir.tightenedFrom !== null)
        logger.info('data directory tightened to 0700', { path: dir.path, was: dir.tightenedFrom.toString(8) })
    }
    // Refuses to start (SecretsKeyError, exit 1) when SECRETS_KEY cannot open the stored secrets.
    await verifySecretsKey(backend, services.secrets)
    await bootstrap(services)
    // A wrong OIDC_ISSUER (no discovery document, another issuer) stops the start; an unreachable
    // provider does not: sign-in through it waits for it, the rest serves (client.ts).
    const oidc = oidcSettings ? await OidcClient.discover(oidcSettings) : null
    // Load ADVISORY_DIR and the stored feed snapshots before serving, so no decision is made
    // against data a restart merely has not read yet. Downloads take leases: after listen.
    await advisories.ready
    await advisories.attach(services)
    // Advisory changes from now on are matched against the inventory (new and changed records only);
    // what changed while no process ran is found by one scan of the inventory after start.
    const detector = new ExposureDetector(services)
    detector.follow(advisories)
    void whenListening().then(() => {
      advisories.startFeed()
      void detector.catchUp(advisories.current())
    })
    logger.info('storage ready', { storage: backend.kind })
    return { ...services, webhookRuntime: createWebhookRuntime(services, webhookSettings), oidc }
  })()
  ready.catch((error) => {
    logger.error('start-up failed', { error: String(error) })
    process.exit(1)
  })
  setServices(ready)
  // Registered after every plugin has added its own close hook, so storage closes last.
  setImmediate(() =>
    nitroApp.hooks.hookOnce('close', async () => {
      const services = await ready
      services.oidc?.close()
      await advisories.close()
      // Served versions still in memory are written before storage closes.
      await services.inventory
        .close()
        .catch((error) => logger.warn('inventory flush at shutdown failed', { error: String(error) }))
      await services.storage.close()
    }),
  )
})
