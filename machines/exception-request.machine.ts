import { and, assign, or, setup } from 'xstate'

/**
 * One actor per exception request:
 * `pending` -> `approved` | `denied` | `withdrawn`; `denied` -> `approved`; `approved` and
 * `withdrawn` are final.
 *
 * Pure definition: every fact a guard needs (the caller's firewall permissions, whether the
 * exception id is still free on the firewall, the time) arrives on the event, so the same
 * snapshot answers "may this caller do X now?" with `snapshot.can(event)` and nothing here
 * reads storage or the clock.
 */

/** The permission that adding an exception directly needs; approving and denying need it too. */
export const DECIDE_PERMISSION = 'fw:update:exception'

/** What every decision event carries about the caller. */
export interface CallerFacts {
  /** Principal id of the caller (user or service principal). */
  actor: string
  /** The caller's effective permissions on the request's firewall. */
  permissions: readonly string[]
  /** ISO time of the decision (the machine never reads a clock). */
  at: string
}

export type ExceptionRequestEvent =
  | ({ type: 'APPROVE'; exceptionId: string; exceptionIdFree: boolean; comment?: string } & CallerFacts)
  | ({ type: 'DENY'; comment?: string } & CallerFacts)
  | ({ type: 'WITHDRAW' } & CallerFacts)

/** The mutable part of a request; the immutable part lives in the stored request record. */
interface ExceptionRequestContext {
  requestedBy: string
  updatedAt: string
  decidedBy?: string
  decidedAt?: string
  decisionComment?: string
  exceptionId?: string
}

interface ExceptionRequestInput {
  requestedBy: string
  requestedAt: string
}

export type ExceptionRequestStatus = 'pending' | 'approved' | 'denied' | 'withdrawn'

/** The decision fields of a transition: who, when, and a cleared or new comment. */
const decision = (event: ExceptionRequestEvent) => ({
  decidedBy: event.actor,
  decidedAt: event.at,
  updatedAt: event.at,
  decisionComment: 'comment' in event ? event.comment : undefined,
})

/** The exception request machine; see the file comment. */
export const exceptionRequestMachine = setup({
  types: {
    context: {} as ExceptionRequestContext,
    events: {} as ExceptionRequestEvent,
    input: {} as ExceptionRequestInput,
  },
  guards: {
    mayDecide: ({ event }) => event.permissions.includes(DECIDE_PERMISSION),
    isRequester: ({ context, event }) => event.actor === context.requestedBy,
    exceptionIdFree: ({ event }) => event.type === 'APPROVE' && event.exceptionIdFree,
  },
  actions: {
    recordApproval: assign(({ event }) => ({
      ...decision(event),
      exceptionId: event.type === 'APPROVE' ? event.exceptionId : undefined,
    })),
    // A denial after nothing, or a withdrawal, never carries an added exception.
    recordDenial: assign(({ event }) => ({ ...decision(event), exceptionId: undefined })),
    recordWithdrawal: assign(({ event }) => ({ ...decision(event), exceptionId: undefined })),
  },
}).createMachine({
  id: 'exceptionRequest',
  initial: 'pending',
  context: ({ input }) => ({ requestedBy: input.requestedBy, updatedAt: input.requestedAt }),
  states: {
    pending: {
      on: {
        APPROVE: { guard: and(['mayDecide', 'exceptionIdFree']), target: 'approved', actions: 'recordApproval' },
        DENY: { guard: 'mayDecide', target: 'denied', actions: 'recordDenial' },
        WITHDRAW: { guard: or(['isRequester', 'mayDecide']), target: 'withdrawn', actions: 'recordWithdrawal' },
      },
    },
    denied: {
      on: {
        // A reviewer may change their mind: a denied request can still be approved.
        APPROVE: { guard: and(['mayDecide', 'exceptionIdFree']), target: 'approved', actions: 'recordApproval' },
      },
    },
    approved: { type: 'final' },
    withdrawn: { type: 'final' },
  },
})
