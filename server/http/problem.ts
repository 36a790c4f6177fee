import { ZodError } from 'zod'
import { DomainError, type DomainErrorKind, type FieldError } from '../common/errors'
import { isStorageFailure } from '../../storage/storage-failure'
import { isClientAbort } from './client-abort'

/** An RFC 9457 problem details body with the contract's stable `code`. */
export interface Problem {
  type: string
  title: string
  status: number
  detail: string
  code: string
  errors?: FieldError[]
  permission?: string
  instance?: string
  [extra: string]: unknown
}

/** Errors raised by the HTTP edge itself (size, media type, syntax). */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors?: FieldError[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
  }
}

/** The one mapping of domain error kinds to HTTP statuses (API and registry proxy). */
export const STATUS_BY_KIND: Record<DomainErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  precondition_failed: 412,
  unavailable: 503,
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  499: 'Client Closed Request',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
}

/** Zod issue paths as `rules[0].selector` strings. */
export function fieldErrors(error: ZodError, prefix = ''): FieldError[] {
  return error.issues.map((issue) => {
    const path = issue.path.reduce<string>(
      (acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc ? `${acc}.${String(part)}` : String(part)),
      prefix,
    )
    return { path: path || '(root)', message: issue.message }
  })
}

export function problemOf(status: number, code: string, detail: string, extra: Partial<Problem> = {}): Problem {
  return {
    type: `https://docs.package-firewall.dev/problems/${code.replace(/_/g, '-')}`,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    code,
    ...extra,
  }
}

/**
 * The problem of a request no route takes: 405 when its router said the path takes other methods
 * (`statusCode`), else 404 saying what is `missing` at the path (the query is left out).
 * @example unroutedProblem('GET', '/v1/x?a=1', 404, 'no API operation').detail === 'no API operation at /v1/x'
 */
export function unroutedProblem(method: string, url: string, statusCode: number | undefined, missing: string): Problem {
  const path = url.split('?')[0]
  return statusCode === 405
    ? problemOf(405, 'method_not_allowed', `${method} is not allowed on ${path}`)
    : problemOf(404, 'route_not_found', `${missing} at ${path}`)
}

/** Seconds a client waits before retrying after a storage failure (503). */
export const STORAGE_RETRY_AFTER_SECONDS = 5

/**
 * Maps any error to a problem; unknown errors become a 500 that reveals nothing. A storage
 * failure is 503 `storage_unavailable` with Retry-After (logged by the caller as unexpected); a
 * client gone mid-body is 499 `client_closed_request`, not unexpected.
 */
export function toProblem(error: unknown): { problem: Problem; headers: Record<string, string>; unexpected: boolean } {
  if (error instanceof HttpProblem) {
    return {
      problem: problemOf(error.status, error.code, error.message, error.errors ? { errors: error.errors } : {}),
      headers: error.headers,
      unexpected: false,
    }
  }
  if (error instanceof DomainError) {
    const extra: Partial<Problem> = {}
    if (error.details.errors) extra.errors = error.details.errors
    if (error.details.permission) extra.permission = error.details.permission
    Object.assign(extra, error.details.extra)
    return {
      problem: problemOf(STATUS_BY_KIND[error.kind], error.code, error.message, extra),
      headers: {},
      unexpected: false,
    }
  }
  if (isClientAbort(error)) {
    // Nobody reads the answer; the status is for the audit entry and metrics (docs/security.md).
    return {
      problem: problemOf(499, 'client_closed_request', 'the client closed the request before its body was complete'),
      headers: {},
      unexpected: false,
    }
  }
  if (isStorageFailure(error)) {
    return {
      problem: problemOf(503, 'storage_unavailable', 'storage is unavailable; retry later'),
      headers: { 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) },
      unexpected: true,
    }
  }
  if (error instanceof ZodError) {
    const errors = fieldErrors(error)
    return {
      problem: problemOf(400, 'validation_failed', errors.map((e) => `${e.path}: ${e.message}`).join('; '), { errors }),
      headers: {},
      unexpected: false,
    }
  }
  return {
    problem: problemOf(
      500,
      'internal_error',
      'an unexpected error occurred; the request id identifies it in the server log',
    ),
    headers: {},
    unexpected: true,
  }
}
