import type { IncomingMessage } from 'node:http'

/** The body passed the adapter's limit; the adapter answers 413. */
export class BodyTooLarge extends Error {
  constructor() {
    super('request body too large')
    this.name = 'BodyTooLarge'
  }
}

/**
 * Reads a node request body, counting bytes as they arrive: past `limit` it stops reading
 * (the request is paused, never drained) and rejects with BodyTooLarge, so an oversized body
 * without Content-Length costs at most `limit` bytes of memory. Answer with `connection: close`
 * so the rest is never read.
 * @example const body = await readNodeBody(req, 1024 * 1024)
 */
export function readNodeBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  if (Number(req.headers['content-length'] ?? 0) > limit) return Promise.reject(new BodyTooLarge())
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const stop = () => {
      req.off('data', onData).off('end', onEnd).off('error', onError)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= limit) return void chunks.push(chunk)
      stop()
      req.pause()
      reject(new BodyTooLarge())
    }
    const onEnd = () => {
      stop()
      resolve(Buffer.concat(chunks))
    }
    const onError = (error: Error) => {
      stop()
      reject(error)
    }
    req.on('data', onData).on('end', onEnd).on('error', onError)
  })
}

/**
 * Reads a Fetch API body stream the same way: past `limit` the stream is cancelled and the read
 * rejects with BodyTooLarge.
 * @example const body = await readWebBody(request.body, 1024 * 1024)
 */
export async function readWebBody(stream: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array> {
  if (!stream) return new Uint8Array(0)
  const reader = stream.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      // Not awaited: a source may take its time to wind down; nothing more is read either way.
      reader.cancel().catch(() => undefined)
      throw new BodyTooLarge()
    }
    chunks.push(value)
  }
  const body = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    body.set(chunk, offset)
    offset += chunk.byteLength
  }
  return body
}
