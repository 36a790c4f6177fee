import type { DashboardCall } from './ports'
import { getExceptionRequest } from '../exception-requests'
import { deliveryStateView } from '../../machines/webhook-delivery/policy'
import type { DeliveryContext } from '../../machines/webhook-delivery/types'
import { webhookState } from '../webhooks/configuration/delivery-control'
import { activePaths } from './diagram'
import { liveId, type LiveKind, type LiveState } from '../observability/live-registry'

/**
 * What the live stream sends for one actor: the machine state (for the diagram) and the few
 * fields the page shows next to it. Read from the live registry when this process runs the
 * actor and published recently, else from the persisted state (the actor may run elsewhere).
 */
export interface LiveMessage {
  value: unknown
  paths: string[]
  fields: Record<string, string | number | null>
}

/** A publish this recent wins over the persisted state, which may lag a transition behind. */
const FRESH_MS = 5_000

export interface LiveTarget {
  kind: LiveKind
  /** Registry id (see `liveId`). */
  id: string
  /** Reads the state through the domain (permission-checked); also the fallback source. */
  read: (ctx: DashboardCall) => Promise<LiveMessage>
  /** Turns a published state into a message, when one is fresh. */
  fromPublished: (state: LiveState) => LiveMessage
}

function webhookMessage(value: unknown, fields: ReturnType<typeof deliveryStateView>): LiveMessage {
  return {
    value,
    paths: activePaths(value),
    fields: {
      state: fields.state,
      bufferedEvents: fields.bufferedEvents,
      quarantinedUntil: fields.quarantinedUntil ?? null,
      nextAttemptAt: fields.nextAttemptAt ?? null,
    },
  }
}

export function webhookTarget(ns: string, id: string): LiveTarget {
  return {
    kind: 'webhook',
    id: liveId.webhook(ns, id),
    read: async (ctx) => {
      const [view, snapshot] = await Promise.all([webhookState(ctx, id), ctx.services.webhooks.loadSnapshot(ns, id)])
      const value = (snapshot as { value?: unknown } | null)?.value ?? view.state
      return webhookMessage(value, view)
    },
    fromPublished: (state) =>
      webhookMessage(state.value, deliveryStateView({ value: state.value, context: state.context as DeliveryContext })),
  }
}

export function exceptionRequestTarget(ns: string, fw: string, id: string): LiveTarget {
  const message = (status: unknown): LiveMessage => ({
    value: status,
    paths: activePaths(status),
    fields: { status: String(status) },
  })
  return {
    kind: 'exception-request',
    id: liveId.exceptionRequest(ns, fw, id),
    read: async (ctx) => message((await getExceptionRequest(ctx, fw, id)).status),
    fromPublished: (state) => message(state.value),
  }
}

/** The current message: a fresh publish if there is one, else the persisted state. */
export async function currentMessage(ctx: DashboardCall, target: LiveTarget): Promise<LiveMessage> {
  const published = ctx.services.live.latest(target.kind, target.id)
  if (published && Date.now() - published.at < FRESH_MS) return target.fromPublished(published)
  return target.read(ctx)
}
