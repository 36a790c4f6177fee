import { gunzipSync } from 'node:zlib'
import type { RegistryExchange } from './exchange'
import { RegistryError } from './responses'

/**
 * The raw request body, refused with 413 beyond `limit` bytes; a gzip `content-encoding`
 * (npm sends audit bodies that way) is undone.
 */
export async function readBodyBytes(
  request: Pick<RegistryExchange, 'headers' | 'body'>,
  limit: number,
): Promise<Buffer> {
  const declared = Number(request.headers['content-length'] ?? 0)
  if (declared > limit) throw new RegistryError(413, `request body exceeds ${limit} bytes`)
  const chunks: Buffer[] = []
  let total = 0
  for await (const chunk of request.body) {
    total += chunk.length
    if (total > limit) throw new RegistryError(413, `request body exceeds ${limit} bytes`)
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
  }
  const body = Buffer.concat(chunks)
  if (/gzip/i.test(String(request.headers['content-encoding'] ?? ''))) {
    try {
      return gunzipSync(body, { maxOutputLength: limit })
    } catch {
      throw new RegistryError(400, 'request body is not valid gzip')
    }
  }
  return body
}

/** The body parsed as JSON; 400 when it is not. */
export async function readJson(
  request: Pick<RegistryExchange, 'headers' | 'body'>,
  limit: number,
): Promise<{ raw: Buffer; json: unknown }> {
  const raw = await readBodyBytes(request, limit)
  try {
    return { raw, json: JSON.parse(raw.toString('utf8')) }
  } catch {
    throw new RegistryError(400, 'request body is not valid JSON')
  }
}
