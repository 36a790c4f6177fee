import type { DashboardPorts } from '../ports'
import { createEventStream, getRouterParams, setResponseStatus } from 'h3'
import type { DashboardHandler } from '../handler'
import { authenticate } from '../../auth/authenticate'
import { problemOf, toProblem } from '../../http/problem'
import { sendProblem } from '../../http/respond'
import { LiveStreamSlots } from '../live-slots'
import {
  currentMessage,
  exceptionRequestTarget,
  webhookTarget,
  type LiveMessage,
  type LiveTarget,
} from '../live-source'
import { enforceTokenRateLimit, openRequest } from '../../http/edge'
import { dashboardSession } from '../session'

/** Polling interval of the persisted state (the fallback when no publisher runs here). */
const POLL_MS = 1000
/** A comment line keeps proxies from closing an idle stream. */
const PING_EVERY = 15
/** Seconds a refused client waits before trying again. */
const FULL_RETRY_AFTER_SECONDS = 5

// One set of slots per process (per services: tests may run several in one process).
const slotsByServices = new WeakMap<DashboardPorts, LiveStreamSlots>()
function liveSlots(services: DashboardPorts): LiveStreamSlots {
  let slots = slotsByServices.get(services)
  if (!slots) slotsByServices.set(services, (slots = new LiveStreamSlots(services.config.liveStreams)))
  return slots
}

/**
 * `GET /namespaces/{ns}/live/...`: a server-sent event stream of one actor's state. Each
 * message is `event: state` with a JSON `LiveMessage`, sent when the state changes (pushed by
 * the live registry, or noticed by the one-second poll). The session's token is checked again
 * on every poll, so signing out or revoking the token ends the stream.
 */
function liveStream(targetOf: (params: Record<string, string>) => LiveTarget): DashboardHandler {
  return async (event, getServices) => {
    const services = await getServices()
    const { meta } = openRequest(event, services.config.trustProxy)
    const session = await dashboardSession(event, services)
    const params = getRouterParams(event, { decode: true })
    const ns = params.ns ?? ''
    const target = targetOf(params)
    let first: LiveMessage
    let ctx
    try {
      const principal = await authenticate(services, session.data.token ?? null, ns)
      // Opening a stream counts against the token's API limit; its polls do not.
      await enforceTokenRateLimit(event, services, 'api', principal)
      ctx = { services, ns, principal, meta }
      first = await target.read(ctx)
    } catch (error) {
      const { problem } = toProblem(error)
      setResponseStatus(event, problem.status)
      return problem.detail
    }
    const release = liveSlots(services).take()
    if (!release) {
      const { limit } = liveSlots(services)
      const detail = `this process serves at most ${limit} live streams (DASHBOARD_LIVE_STREAMS) and all are open; try again shortly`
      return sendProblem(event, problemOf(503, 'live_streams_exhausted', detail), {
        'retry-after': String(FULL_RETRY_AFTER_SECONDS),
      })
    }
    const stream = createEventStream(event)
    let lastJson = ''
    const send = (message: LiveMessage) => {
      const json = JSON.stringify(message)
      if (json === lastJson) return
      lastJson = json
      void stream.push({ event: 'state', data: json }).catch(() => undefined)
    }
    const unsubscribe = services.live.subscribe(target.kind, target.id, (state) => send(target.fromPublished(state)))
    let ticks = 0
    const poll = async () => {
      try {
        await authenticate(services, session.data.token ?? null, ns)
        send(await currentMessage(ctx, target))
        if (++ticks % PING_EVERY === 0)
          void stream.push({ event: 'ping', data: String(Date.now()) }).catch(() => undefined)
      } catch {
        void stream.close()
      }
    }
    // poll handles its own failures (the stream closes).
    const timer = setInterval(() => void poll(), POLL_MS)
    stream.onClosed(async () => {
      release()
      clearInterval(timer)
      unsubscribe()
      await stream.close()
    })
    // Gone while this handler awaited: the stream's own close hook came too late to see it.
    if (event.node.res.closed || event.node.req.socket?.destroyed) void stream.close()
    send(first)
    // From here the stream only relays changes: delivery need not give way to it (requests-in-flight.ts).
    services.requests.handled(event.node.res)
    return stream.send()
  }
}

export const webhookLive = liveStream((p) => webhookTarget(p.ns, p.id))
export const exceptionRequestLive = liveStream((p) => exceptionRequestTarget(p.ns, p.fw, p.id))
