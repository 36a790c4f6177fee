import {
  defineEventHandler,
  getRequestHeader,
  readRawBody,
  setResponseHeaders,
  setResponseStatus,
  type EventHandler,
} from 'h3'
import type { ReceiverAnswer, WebhookReceiver } from '../receiver'
import { DEFAULT_MAX_BODY_BYTES, methodNotAllowed, tooLarge, type AdapterOptions } from './limits'

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
    if (Number(getRequestHeader(event, 'content-length') ?? 0) > limit) return send(tooLarge(limit))
    // `false`: the bytes as sent; a decoded and re-encoded string could differ from what was signed.
    const body = (await readRawBody(event, false)) ?? Buffer.alloc(0)
    if (body.byteLength > limit) return send(tooLarge(limit))
    return send(await receiver.receive({ body, headers: event.node.req.headers }))
  })
}
