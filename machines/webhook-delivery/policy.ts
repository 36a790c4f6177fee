import type { AttemptReport, DeliveryContext, TakeBatchInput } from './types'
import { maxAttempts, retryDelay } from './retry'

/**
 * Pure calculations the delivery machine's guards and actions share: pacing window, retry
 * delay, remaining backlog, attempt events, and the state answer for the API.
 */

/**
 * The pacing rule: at most `limit` attempt starts in any `windowMs` span. For a whole rate r that
 * is r per second; a webhook's own `rateLimit` (never above the operator's `rate`) may be
 * fractional: 0.5 allows one start per 2 s, 2.5 two per 800 ms.
 * @example pacingRule({ ...context, rateLimit: 0.5 }) // { limit: 1, windowMs: 2000 }
 */
function pacingRule(context: DeliveryContext): { limit: number; windowMs: number } {
  const rate = Math.min(context.rateLimit ?? context.settings.rate, context.settings.rate)
  const limit = Math.max(1, Math.floor(rate))
  return { limit, windowMs: Math.round((1000 * limit) / rate) }
}

/** Attempt starts inside the pacing window ending at `context.now`. */
function startsInWindow(context: DeliveryContext): number[] {
  const { windowMs } = pacingRule(context)
  return context.recentStarts.filter((start) => start > context.now - windowMs)
}

/** Whether the next attempt must wait: `limit` starts already lie in the window. */
export function mustPace(context: DeliveryContext): boolean {
  return startsInWindow(context).length >= pacingRule(context).limit
}

/**
 * Whether an actor in `active` goes straight on to take a batch when told that `bufferedEvents`
 * wait at `now` (`EVENTS_BUFFERED`: active, dispatching, delivering.preparing), and with what input.
 * Null: it stays, or goes to pacing or disabled. The host starts that take ahead of the actor's
 * step, which then adopts it (server/webhooks/delivery/host.ts); the machine's tests hold this
 * to what the machine does.
 */
export function takeOnBuffered(
  value: unknown,
  context: DeliveryContext,
  bufferedEvents: number,
  now: number,
): TakeBatchInput | null {
  if (value !== 'active' || bufferedEvents <= 0 || context.disabled === true || context.batch !== null) return null
  return mustPace({ ...context, bufferedEvents, now: Math.max(context.now, now) }) ? null : takeBatchInput(context)
}

/** The `takeBatch` actor's input. */
export function takeBatchInput(context: DeliveryContext): TakeBatchInput {
  return { webhookId: context.webhookId, firstAttemptIsLast: maxAttempts(context.settings.retryScheduleMs) <= 1 }
}

/** When the next attempt may start: the oldest of the last `limit` starts leaves the window. */
export function pacingDeadline(context: DeliveryContext): number {
  const { limit, windowMs } = pacingRule(context)
  return context.recentStarts[context.recentStarts.length - limit] + windowMs
}

/** Delay before retrying the batch after this failed attempt, or null when it was the last. */
export function retryDelayAfter(context: DeliveryContext, report: AttemptReport): number | null {
  return retryDelay((context.batch?.attempts ?? 0) + 1, report.outcome, context.settings.retryScheduleMs)
}

/** Events left once the batch in flight leaves the buffer (the adapter's count wins). */
export function remainingAfterBatch(context: DeliveryContext, report: AttemptReport): number {
  return report.bufferedEvents ?? Math.max(0, context.bufferedEvents - (context.batch?.eventIds.length ?? 0))
}

/** Body of `GET .../webhooks/{id}/state` from a machine snapshot. */
export interface DeliveryStateView {
  state: string
  bufferedEvents: number
  quarantinedUntil?: string
  nextAttemptAt?: string
}

/**
 * Reads the state answer from a snapshot; the top-level state name is the lifecycle state.
 * @example deliveryStateView(actor.getSnapshot()) // { state: 'retrying', bufferedEvents: 3, nextAttemptAt: '...' }
 */
export function deliveryStateView(snapshot: { value: unknown; context: DeliveryContext }): DeliveryStateView {
  const value = snapshot.value
  const state = typeof value === 'string' ? value : Object.keys(value as object)[0]
  const { bufferedEvents, quarantinedUntil, nextAttemptAt } = snapshot.context
  return {
    state,
    bufferedEvents,
    ...(quarantinedUntil === null ? {} : { quarantinedUntil: new Date(quarantinedUntil).toISOString() }),
    ...(nextAttemptAt === null ? {} : { nextAttemptAt: new Date(nextAttemptAt).toISOString() }),
  }
}

/** A crashed `deliverBatch` adapter counts as a failed attempt without a response. */
export function failedAttemptReport(error: unknown, now: number): AttemptReport {
  const message = error instanceof Error ? error.message : String(error)
  return {
    outcome: { kind: 'failure', responseStatus: 0, responseBody: '', error: message, durationMillis: 0 },
    startedAt: now,
    finishedAt: now,
  }
}
