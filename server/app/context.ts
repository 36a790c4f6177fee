import { actorOf, type Principal, type RequestMeta } from '../auth/principal'
import type { Actor } from '../events/schemas'
import type { Services } from './services'

/** One authenticated call into the domain: who, in which namespace, with what request. */
export interface CallContext {
  services: Services
  ns: string
  principal: Principal
  meta: RequestMeta
}

export const actorOfCall = (ctx: CallContext): Actor => actorOf(ctx.principal, ctx.meta)
export const nowIso = (ctx: Pick<CallContext, 'services'>): string => new Date(ctx.services.clock.now()).toISOString()
