import type { z } from 'zod'
import type { ApiCall } from './ports'
import type { Access } from './access'

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'

export interface Reply {
  status?: number
  body?: unknown
  /** A body already serialised (hot paths that cache their JSON). */
  json?: string | Buffer
  headers?: Record<string, string>
}

export interface OperationCall<P, Q, B> {
  ctx: ApiCall
  params: P
  query: Q
  body: B
  headers: Record<string, string | string[] | undefined>
  /** The request URL (path and query), for pagination links. */
  url: URL
}

export interface AuditSpec {
  /** The audit action; the event type is `audit.<action>`. */
  action: string
  resourceType: string
  /** From the raw path parameters. A create (201) records the new resource's `id` instead. */
  resourceId?: (params: Record<string, string | undefined>) => string | undefined
  /** Also record successful calls of a read (e.g. a secret reveal). */
  reads?: boolean
}

/** One API operation: the schemas it validates, and a thin handler that calls the domain. */
// `any` defaults: the router holds operations of every parameter type in one table, and a
// handler taking specific params is not assignable to one taking `unknown` ones.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface Operation<P = any, Q = any, B = any> {
  id: string
  method: Method
  /** OpenAPI-style path, e.g. `/v1/{ns}/config/{fw}`. */
  path: string
  summary: string
  tag: string
  params: z.ZodType<P>
  /** What the path demands of the caller; checked before the query and body are read. */
  access: Access
  query?: z.ZodType<Q>
  /** Absent: the operation takes no body (an empty body or `{}` is accepted). */
  body?: z.ZodType<B>
  /**
   * `body.safeParse` as it answers, taking turns with the rest of the process, for a schema whose
   * bodies can be large (a firewall of up to 1 MiB: firewall/input-parse.ts). `body` still names
   * the schema (OpenAPI).
   */
  parseBody?: (value: unknown) => Promise<{ success: true; data: B } | { success: false; error: z.ZodError }>
  /**
   * An action whose body is optional (approve, deny): no body or an empty one stands for `{}`.
   * Otherwise a body is required and must be a JSON object (CONTRACT section 8, "bodies").
   */
  bodyOptional?: boolean
  response?: z.ZodType
  /** The media type of the answer when it is not `application/json` (a JSON format of its own). */
  mediaType?: string
  successStatus?: number
  audit: AuditSpec
  /** A reply at once when it needs no read (the hot reads, #27: the router then awaits nothing). */
  handler: (call: OperationCall<P, Q, B>) => Reply | Promise<Reply>
}

/**
 * Declares an operation with types inferred from its schemas.
 * @example defineOperation({ id: 'listTeams', method: 'GET', path: '/v1/{ns}/teams', ... })
 */
export function defineOperation<P, Q = Record<string, never>, B = undefined>(
  operation: Operation<P, Q, B>,
): Operation<P, Q, B> {
  return operation
}
