import { defineNitroPlugin } from 'nitropack/runtime'
import { useServices } from '../app/runtime'
import { logger } from '../app/logger'
import { exposedGc, processDeps, startQuietScavenges } from '../app/quiet-scavenge'

/** Collects the young generation in the event loop's quiet spells (server/app/quiet-scavenge.ts), unless IDLE_SCAVENGE=off. */
export default defineNitroPlugin((nitroApp) => {
  const stop = useServices()
    .then((services) => {
      if (!services.config.idleScavenge) return null
      const gc = exposedGc()
      if (!gc) {
        logger.warn('idle scavenges unavailable: this V8 does not expose gc; V8 alone decides when to collect')
        return null
      }
      return startQuietScavenges(processDeps(gc))
    })
    .catch(() => null) // a start that failed is reported where services are opened
  nitroApp.hooks.hookOnce('close', async () => {
    ;(await stop)?.()
  })
})
