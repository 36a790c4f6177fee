import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A plain HTTP server on 127.0.0.1 with a random port. */
export interface Loopback {
  url: string
  close(): Promise<void>
}

/** Reads a whole request body. */
export async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** The password of a Basic Authorization header, or null. */
export function basicPassword(req: IncomingMessage): string | null {
  const m = /^Basic\s+(\S+)/i.exec(req.headers.authorization ?? '')
  if (!m) return null
  const text = Buffer.from(m[1], 'base64').toString('utf8')
  return text.slice(text.indexOf(':') + 1)
}

export async function startLoopback(
  handle: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> | void,
): Promise<Loopback> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    Promise.resolve(handle(req, res, url)).catch((error) => {
      res.statusCode = 500
      res.end(String(error))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

export function send(
  res: ServerResponse,
  status: number,
  body: string | Buffer = '',
  type = 'text/plain',
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), ...headers })
  res.end(body)
}
