import { gunzipSync } from 'node:zlib'
import type { H3Event } from 'h3'
import { RegistryError } from './responses'

/**
 * The raw request body, refused with 413 beyond `limit` bytes; a gzip `content-encoding`
 * (npm sends audit bodies that way) is undone.
 */
export async function readBodyBytes(event: H3Event, limit: number): Promise<Buffer> {
  const req = event.node.req
  const declared = Number(req.headers['content-length'] ?? 0)
  if (declared > limit) throw new RegistryError(413, `request body exceeds ${limit} bytes`)
  const chunks: Buffer[] = []
  let total = 0
  for await (const chunk of req) {
    total += (chunk as Buffer).length
    if (total > limit) throw new RegistryError(413, `request body exceeds ${limit} bytes`)
    chunks.push(chunk as Buffer)
  }
  const body = Buffer.concat(chunks)
  if (/gzip/i.test(String(req.headers['content-encoding'] ?? ''))) {
    try {
      return gunzipSync(body, { maxOutputLength: limit })
    } catch {
      throw new RegistryError(400, 'request body is not valid gzip')
    }
  }
  return body
}

/** The body parsed as JSON; 400 when it is not. */
export async function readJson(event: H3Event, limit: number): Promise<{ raw: Buffer; json: unknown }> {
  const raw = await readBodyBytes(event, limit)
  try {
    return { raw, json: JSON.parse(raw.toString('utf8')) }
  } catch {
    throw new RegistryError(400, 'request body is not valid JSON')
  }
}
