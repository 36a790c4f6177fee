import type { WebhookReceiver } from '../receiver'
import { BodyTooLarge, readWebBody } from './bounded-body'
import { DEFAULT_MAX_BODY_BYTES, methodNotAllowed, tooLarge, type AdapterOptions } from './limits'

const respond = (answer: { status: number; headers: Record<string, string>; body: string }) =>
  new Response(answer.body === '' ? null : answer.body, { status: answer.status, headers: answer.headers })

/**
 * A `(Request) => Promise<Response>` function for `receiver`: Deno, Bun, Cloudflare Workers,
 * Next.js route handlers, Hono and anything else speaking the Fetch API. The body is counted
 * while it is read: one without Content-Length is refused 413 at the limit, not after.
 * @example export const POST = toFetchHandler(receiver)
 */
export function toFetchHandler(receiver: WebhookReceiver, options: AdapterOptions = {}) {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  return async (request: Request): Promise<Response> => {
    if (request.method !== 'POST') return respond(methodNotAllowed)
    if (Number(request.headers.get('content-length') ?? 0) > limit) return respond(tooLarge(limit))
    let body: Uint8Array
    try {
      body = await readWebBody(request.body, limit)
    } catch (error) {
      if (error instanceof BodyTooLarge) return respond(tooLarge(limit))
      throw error
    }
    return respond(await receiver.receive({ body, headers: request.headers }))
  }
}
