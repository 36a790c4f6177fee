import { createHash } from 'node:crypto'
import type { Decision } from '../firewall/rules/evaluate'
import type { RegistryExchange, RegistryResponse } from './exchange'
import { stringifyCooperatively, type JsonPieces } from '../common/cooperative-json'
import { TimeSlice } from '../common/time-slice'

type Reply = Pick<RegistryExchange, 'method' | 'response'>

/**
 * A registry answer other than success. npm shows `error` of a JSON body in its output
 * (`npm error 403 403 Forbidden - GET <url> - <error>`), so every refusal carries one.
 */
export class RegistryError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: ResponseHeaders = {},
  ) {
    super(message)
  }

  /** The answer's media type; a refusal with a stable code answers an RFC 9457 problem. */
  get contentType(): string {
    return 'application/json'
  }

  /** The answer's JSON body; always carries `error`, the text npm prints. */
  body(): Record<string, unknown> {
    return { error: this.message }
  }
}

/** Headers of an answer; a list is sent as that many header lines (e.g. one challenge each). */
export type ResponseHeaders = Record<string, string | readonly string[]>

/** Seconds a client should wait before retrying after an upstream outage. */
export const RETRY_AFTER_SECONDS = 10

/** Writes a JSON answer and ends the response. */
export function sendJson(
  reply: Reply,
  status: number,
  body: unknown,
  headers: ResponseHeaders = {},
  contentType = 'application/json',
): void {
  const res = reply.response
  const text = JSON.stringify(body)
  res.statusCode = status
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value)
  res.setHeader('content-type', contentType)
  res.setHeader('content-length', Buffer.byteLength(text))
  res.end(reply.method === 'HEAD' ? undefined : text)
}

/** A JSON document serialised once, in pieces (common/cooperative-json.ts), with its size and ETag. */
export interface PreparedDocument extends JsonPieces {
  etag: string
}

/**
 * A document serialised once with its ETag, so it can be served many times. Serialising and
 * hashing take turns with the rest of the process: upstream metadata is up to `UPSTREAM_MAX_BODY`.
 */
export async function prepareJsonDocument(body: unknown): Promise<PreparedDocument> {
  const slice = new TimeSlice()
  const { pieces, bytes } = await stringifyCooperatively(body, slice)
  const hash = createHash('sha1')
  for (const piece of pieces) {
    hash.update(piece)
    await slice.step()
  }
  return { pieces, bytes, etag: `"${hash.digest('base64url')}"` }
}

/** Writes a prepared document's pieces, waiting for the client to drain each one it could not take at once. */
async function writePieces(res: RegistryResponse, pieces: readonly string[]): Promise<void> {
  for (const piece of pieces.slice(0, -1)) {
    if (res.write(piece)) continue
    // A client that went away ends the wait as well: nothing more is written.
    const gone = await new Promise<boolean>((resolve) => {
      const drained = () => done(false)
      const closed = () => done(true)
      const done = (value: boolean) => {
        res.off('drain', drained)
        res.off('close', closed)
        resolve(value)
      }
      res.once('drain', drained)
      res.once('close', closed)
    })
    if (gone) return
  }
  res.end(pieces.at(-1) ?? '')
}

/**
 * Sends a JSON answer serialised cooperatively (a document whose size an upstream decides);
 * `sendJson` for answers of our own size.
 */
export async function sendJsonDocument(
  reply: Reply,
  status: number,
  body: unknown,
  contentType = 'application/json',
): Promise<void> {
  const { pieces, bytes } = await stringifyCooperatively(body)
  const res = reply.response
  res.statusCode = status
  res.setHeader('content-type', contentType)
  res.setHeader('content-length', bytes)
  if (reply.method === 'HEAD') res.end()
  else await writePieces(res, pieces)
}

/** Sends a prepared document, or 304 when the client already holds this ETag. */
export async function sendPreparedDocument(
  reply: Reply & Pick<RegistryExchange, 'headers'>,
  document: PreparedDocument,
  contentType: string,
  headers: Record<string, string> = {},
): Promise<void> {
  const { pieces, bytes, etag } = document
  const res = reply.response
  res.setHeader('etag', etag)
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value)
  const presented = String(reply.headers['if-none-match'] ?? '')
  if (presented.split(/\s*,\s*/).some((tag) => tag.replace(/^W\//, '') === etag)) {
    res.statusCode = 304
    res.end()
    return
  }
  res.statusCode = 200
  res.setHeader('content-type', contentType)
  res.setHeader('content-length', bytes)
  if (reply.method === 'HEAD') res.end()
  else await writePieces(res, pieces)
}

/** Writes bytes and ends the response. */
export function sendBytes(reply: Reply, status: number, bytes: Buffer, contentType: string): void {
  const res = reply.response
  res.statusCode = status
  res.setHeader('content-type', contentType)
  res.setHeader('content-length', bytes.length)
  res.end(reply.method === 'HEAD' ? undefined : bytes)
}

/** Where a block happened: enough to name the request id and link the exception form. */
interface BlockSite {
  ns: string
  /** The firewall the client called (exceptions are requested there, even for an inherited rule). */
  firewall: { id: string }
  meta: { requestId: string }
  /** Dashboard origin, no trailing slash. */
  dashboardUrl: string
}

/**
 * The dashboard form that requests an exception for a blocked request, pre-filled from the
 * request id (`exception-requests/new?request=req-...`).
 * @example exceptionFormLink(site) // 'http://localhost:3000/namespaces/default/firewalls/web/exception-requests/new?request=req-...'
 */
export function exceptionFormLink(site: BlockSite): string {
  const path = ['namespaces', site.ns, 'firewalls', site.firewall.id, 'exception-requests', 'new']
    .map(encodeURIComponent)
    .join('/')
  return `${site.dashboardUrl}/${path}?request=${encodeURIComponent(site.meta.requestId)}`
}

/**
 * The `error` text of a blocked download or upload: package@version, rule id, its
 * description (and the selector's finding when it adds something), the request id to quote
 * and the dashboard link that requests an exception for it.
 * @example blockedMessage(decision, 'left-pad', '1.3.0', request)
 */
export function blockedMessage(decision: Decision, name: string, version: string, site: BlockSite): string {
  const rule = decision.rule
  const ruleId = rule?.id ?? 'unknown'
  const inherited = rule?.sourceFirewall ? ` (inherited from firewall ${rule.sourceFirewall})` : ''
  const description = rule?.description || rule?.message || decision.message
  const detail = rule?.message && rule.message !== description ? ` [${rule.message}]` : ''
  return (
    `${name}@${version} is blocked by firewall ${decision.firewall} rule ${ruleId}${inherited}: ${description}${detail}. ` +
    `Request id: ${site.meta.requestId}. Request an exception: ${exceptionFormLink(site)}`
  )
}
