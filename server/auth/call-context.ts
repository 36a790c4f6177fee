import type { Clock } from '../common/clock'
import type { Actor } from '../events/schemas'
import { actorOf, type Principal, type RequestMeta } from './principal'

/**
 * One authenticated call into an area: who, in which namespace, with what request, over the
 * ports `P` the area declares (its own interface; the composition root passes the services,
 * which have every port).
 */
export interface CallContext<P> {
  services: P
  ns: string
  principal: Principal
  meta: RequestMeta
}

export const actorOfCall = (ctx: Pick<CallContext<unknown>, 'principal' | 'meta'>): Actor =>
  actorOf(ctx.principal, ctx.meta)
export const nowIso = (ctx: { services: { clock: Clock } }): string => new Date(ctx.services.clock.now()).toISOString()
