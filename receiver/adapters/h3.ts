import {
  defineEventHandler,
  readRawBody,
  setResponseHeader,
  setResponseHeaders,
  setResponseStatus,
  type EventHandler,
  type H3Event,
} from 'h3'
import type { ReceiverAnswer, WebhookReceiver } from '../receiver'
import { BodyTooLarge, readNodeBody, readWebBody } from './bounded-body'
import { DEFAULT_MAX_BODY_BYTES, methodNotAllowed, tooLarge, type AdapterOptions } from './limits'

/**
 * The body as sent (`false` in readRawBody terms: the bytes that were signed), counted while it
 * arrives. A node request (Nitro's node presets) and a web stream (h3's web and plain handlers)
 * are read up to the limit only; a body the host already holds in memory is checked as it is.
 */
async function readBody(event: H3Event, limit: number): Promise<Uint8Array> {
  const req = event.node.req as H3Event['node']['req'] & { rawBody?: unknown; body?: unknown }
  const web = event.web?.request?.body ?? (event as { _requestBody?: unknown })._requestBody
  if (web instanceof ReadableStream) return readWebBody(web, limit)
  if (web === undefined && req.rawBody === undefined && req.body === undefined && typeof req.on === 'function')
    return readNodeBody(req, limit)
  const body = (await readRawBody(event, false)) ?? Buffer.alloc(0)
  if (body.byteLength > limit) throw new BodyTooLarge()
  return body
}

/**
 * An h3 (1.x) event handler for `receiver`, for Nitro and Nuxt server routes.
 * @example app.use('/webhooks', toH3Handler(receiver)) // or: export default toH3Handler(receiver)
 */
export function toH3Handler(receiver: WebhookReceiver, options: AdapterOptions = {}): EventHandler {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  return defineEventHandler(async (event) => {
    const send = (answer: ReceiverAnswer) => {
      setResponseStatus(event, answer.status)
      setResponseHeaders(event, answer.headers)
      return answer.body
    }
    if (event.method !== 'POST') return send(methodNotAllowed)
    let body: Uint8Array
    try {
      body = await readBody(event, limit)
    } catch (error) {
      if (!(error instanceof BodyTooLarge)) throw error
      // The rest of the body is never read: the connection closes after the answer.
      setResponseHeader(event, 'connection', 'close')
      return send(tooLarge(limit))
    }
    return send(await receiver.receive({ body, headers: event.node.req.headers }))
  })
}
