import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ReceiverAnswer, WebhookReceiver } from '../receiver'
import { BodyTooLarge, readNodeBody } from './bounded-body'
import { DEFAULT_MAX_BODY_BYTES, methodNotAllowed, tooLarge, type AdapterOptions } from './limits'

function write(res: ServerResponse, answer: ReceiverAnswer): void {
  res.writeHead(answer.status, answer.headers).end(answer.body)
}

/**
 * A node:http listener `(req, res)` for `receiver` (also fits Express and Fastify's raw routes:
 * give it the unparsed request, as the signature covers the exact bytes).
 * @example createServer(toNodeListener(receiver)).listen(8080)
 */
export function toNodeListener(receiver: WebhookReceiver, options: AdapterOptions = {}) {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  return (req: IncomingMessage, res: ServerResponse): void => {
    if (req.method !== 'POST') return write(res, methodNotAllowed)
    readNodeBody(req, limit)
      .then((body) => receiver.receive({ body, headers: req.headers }))
      .then(
        (answer) => write(res, answer),
        (error: unknown) => {
          if (error instanceof BodyTooLarge) return write(res.setHeader('connection', 'close'), tooLarge(limit))
          // The sender went away mid-body, or a bug: nothing useful to say; the sender retries.
          if (res.headersSent || req.destroyed) return void res.destroy()
          write(res, { status: 500, headers: {}, body: '' })
        },
      )
  }
}
