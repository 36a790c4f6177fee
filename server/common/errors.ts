/**
 * Domain errors carry a kind and a stable code, not an HTTP status; the HTTP layer maps
 * kinds to statuses in one place (server/http/problem.ts).
 */
export type DomainErrorKind =
  'invalid' | 'unauthenticated' | 'forbidden' | 'not_found' | 'conflict' | 'precondition_failed' | 'unavailable'

export interface FieldError {
  path: string
  message: string
}

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    readonly code: string,
    message: string,
    readonly details: { errors?: FieldError[]; permission?: string; extra?: Record<string, unknown> } = {},
  ) {
    super(message)
  }
}

export const invalid = (code: string, message: string, errors?: FieldError[]) =>
  new DomainError('invalid', code, message, { errors })
export const notFound = (what: string, id: string) =>
  new DomainError('not_found', `${what.replace(/[ -]/g, '_')}_not_found`, `${what} "${id}" was not found`)
/**
 * A firewall that does not exist and one the caller holds no permission on answer alike (same
 * code, status and text), so the text names both possibilities: a developer whose first
 * install fails learns that access may be what is missing, and nobody learns which it is.
 */
export const firewallNotFound = (id: string) =>
  new DomainError('not_found', 'firewall_not_found', `firewall "${id}" was not found, or you have no access to it`)
export const conflict = (code: string, message: string) => new DomainError('conflict', code, message)
export const forbidden = (permission: string, message = `missing permission ${permission}`) =>
  new DomainError('forbidden', 'permission_denied', message, { permission })
