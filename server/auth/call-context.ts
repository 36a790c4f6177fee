import type { TxWrites } from '../../storage/backend'
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
  /**
   * The call's audit entry, for a command to write in its own transaction. Absent when the caller
   * audits the call on its own (the dashboard), and whatever a command does not take the caller
   * still writes after it.
   */
  audit?: CallAudit
}

/**
 * The audit entry of a successful call, written with the change it records (#27: a second
 * transaction, one more round trip, after every firewall write): the router's entry, the same
 * fields, one transaction instead of two.
 */
export interface CallAudit {
  /** The writes of the entry and its `audit.*` event for a success answered `status` (`createdId`: what a 201 created). */
  success(status: number, createdId?: string): PendingAudit
}

export interface PendingAudit {
  writes: TxWrites
  /** Tells the caller the writes are stored: it writes no entry of its own for this answer. */
  stored(): void
}

export const actorOfCall = (ctx: Pick<CallContext<unknown>, 'principal' | 'meta'>): Actor =>
  actorOf(ctx.principal, ctx.meta)
export const nowIso = (ctx: { services: { clock: Clock } }): string => new Date(ctx.services.clock.now()).toISOString()
