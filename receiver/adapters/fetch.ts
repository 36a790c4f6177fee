import type { WebhookReceiver } from '../receiver'
import { DEFAULT_MAX_BODY_BYTES, methodNotAllowed, tooLarge, type AdapterOptions } from './limits'

const respond = (answer: { status: number; headers: Record<string, string>; body: string }) =>
  new Response(answer.body === '' ? null : answer.body, { status: answer.status, headers: answer.headers })

/**
 * A `(Request) => Promise<Response>` function for `receiver`: Deno, Bun, Cloudflare Workers,
 * Next.js route handlers, Hono and anything else speaking the Fetch API.
 * @example export const POST = toFetchHandler(receiver)
 */
export function toFetchHandler(receiver: WebhookReceiver, options: AdapterOptions = {}) {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  return async (request: Request): Promise<Response> => {
    if (request.method !== 'POST') return respond(methodNotAllowed)
    if (Number(request.headers.get('content-length') ?? 0) > limit) return respond(tooLarge(limit))
    const body = new Uint8Array(await request.arrayBuffer())
    if (body.byteLength > limit) return respond(tooLarge(limit))
    return respond(await receiver.receive({ body, headers: request.headers }))
  }
}
