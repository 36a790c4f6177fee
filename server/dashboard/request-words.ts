import type { ExceptionRequestView } from '../exception-requests'
import type { Exception } from '../firewall/schema'

/**
 * An exception request's state and proposal in plain words, for the developer who asked and
 * the reviewer who decides (the Machines page keeps the machine's own names). Pure.
 */

const pkg = (exception: Pick<Exception, 'selector'>) =>
  exception.selector.version
    ? `${exception.selector.packageName}@${exception.selector.version}`
    : `every version of ${exception.selector.packageName}`

/**
 * One sentence on where a request stands and what it means for the requester's installs.
 * @example requestStateInWords({ status: 'pending', ... }) // 'Waiting for a reviewer. Installs of chalk@5.3.0 stay blocked until it is approved.'
 */
export function requestStateInWords(
  request: Pick<ExceptionRequestView, 'status' | 'proposedException' | 'decidedBy' | 'decisionComment'>,
  viewerId?: string,
): string {
  const what = pkg(request.proposedException)
  const by = request.decidedBy && request.decidedBy !== viewerId ? ` by ${request.decidedBy}` : ''
  const said = request.decisionComment ? ` They wrote: “${request.decisionComment}”` : ''
  switch (request.status) {
    case 'pending':
      return `Waiting for a reviewer. Installs of ${what} stay blocked until it is approved.`
    case 'approved':
      return `Approved${by}. Installs of ${what} go through now.${said}`
    case 'denied':
      return `Denied${by}. Installs of ${what} stay blocked; a reviewer may still approve it later.${said}`
    case 'withdrawn':
      return `Withdrawn${by}. Nothing changes on the firewall; ask again with a new request if you still need it.`
  }
}

/** The reasons of exceptions, as people say them. */
const REASONS: Record<NonNullable<Exception['reason']>, string> = {
  false_positive: 'False positive',
  accepted_risk: 'Accepted risk',
  no_alternative: 'No alternative',
  internal_package: 'Internal package',
  temporary_workaround: 'Temporary workaround',
  other: 'Other',
}

export const reasonInWords = (reason: Exception['reason']): string | undefined => (reason ? REASONS[reason] : undefined)

/**
 * A proposed exception as labelled fields, in place of its JSON: what is allowed, past which
 * rule, until when and why.
 * @example proposalFields(request.proposedException) // [['Package', 'chalk'], ['Version', '5.3.0'], ...]
 */
export function proposalFields(exception: Exception): [string, string][] {
  const fields: [string, string][] = [
    ['Package', exception.selector.packageName],
    ['Version', exception.selector.version ?? 'every version'],
    ['Past the rule', exception.rule],
    ['Until', exception.expires ?? 'no end date'],
  ]
  const reason = reasonInWords(exception.reason)
  if (reason) fields.push(['Reason', reason])
  if (exception.notes) fields.push(['Notes', exception.notes])
  fields.push(['Name on the firewall', exception.id])
  return fields
}
