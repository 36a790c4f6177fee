import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { defineNitroPlugin } from 'nitropack/runtime'
import type { H3Event } from 'h3'
import { useServices } from '../app/runtime'
import { logger } from '../app/logger'
import { whenListening } from '../app/listening'
import { runWithRequestContext, type RequestContext } from '../app/request-context'
import { newId } from '../common/ids'
import { trackRequest } from '../observability/http-tracking'
import { RetentionWorker } from '../observability/retention'
import { retentionPrunes } from '../observability/retention-prunes'

/**
 * Observability for every route: a request context (request id on every log line, route
 * template for metrics), one access line and one metrics sample per request, and the log
 * retention worker.
 *
 * The app handler is wrapped rather than using the 'request'/'afterResponse' hooks: an
 * AsyncLocalStorage context must enclose the handler's whole async chain (a hook cannot), and
 * the response's 'close' event also sees streamed, failed and aborted responses with their
 * real duration.
 */
export default defineNitroPlugin((nitroApp) => {
  const inner = nitroApp.h3App.handler
  nitroApp.h3App.handler = ((event: H3Event) => {
    const context: RequestContext = { requestId: newId('req') }
    event.context.requestId = context.requestId
    trackRequest(event, context)
    return runWithRequestContext(context, () => inner(event))
  }) as typeof inner

  // LOG_RETENTION and LOG_RETENTION_INTERVAL were parsed with the rest of the config (an invalid one stops the start).
  const worker = (async () => {
    const services = await useServices()
    // The retention lease too waits until this process owns its port.
    await whenListening()
    const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
    const retention = new RetentionWorker({
      logs: services.retainedLogs,
      clock: services.clock,
      owner,
      retentionMs: services.config.logRetentionMs,
      intervalMs: services.config.logRetentionIntervalMs,
      prune: retentionPrunes(services, services.config.logRetentionMs),
    })
    void retention.start()
    return retention
  })().catch((error) => {
    logger.error('log retention failed to start', { error: String(error) })
    return null
  })
  nitroApp.hooks.hookOnce('close', async () => {
    await (await worker)?.stop()
  })
})
