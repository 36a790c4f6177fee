import type { Response } from 'undici'
import { loadUndici } from '../net/undici'

/** One part of a `multipart/form-data` body. */
interface FormPart {
  name: string
  filename?: string
  contentType?: string
  data: Buffer
}

/**
 * Splits a `multipart/form-data` body (RFC 7578) held in memory into its parts with undici's
 * WHATWG form-data parser (quoted and bare boundaries alike: .NET quotes them). Returns null when
 * the content type has no boundary or the body does not follow it. PyPI legacy uploads and
 * NuGet pushes are relayed unchanged, so the body is held anyway (the proxy bounds its size).
 * @example (await parseMultipart(body, req.headers['content-type']))?.find((p) => p.name === 'content')
 */
export async function parseMultipart(body: Buffer, contentType: string | undefined): Promise<FormPart[] | null> {
  if (!contentType || !/^multipart\/form-data/i.test(contentType) || !/boundary=/i.test(contentType)) return null
  let form: Awaited<ReturnType<Response['formData']>>
  const { Response } = await loadUndici()
  try {
    form = await new Response(crlfDelimiters(body, contentType), {
      headers: { 'content-type': contentType },
    }).formData()
  } catch {
    return null
  }
  const parts: FormPart[] = []
  for (const [name, value] of form) {
    if (typeof value === 'string') parts.push({ name, data: Buffer.from(value, 'utf8') })
    else {
      const data = Buffer.from(await value.arrayBuffer())
      parts.push({ name, filename: value.name, data, ...(value.type ? { contentType: value.type } : {}) })
    }
  }
  return parts
}

/**
 * The body with every boundary line delimited by CRLF. RFC 2046 delimiters are CRLF, but
 * writers that use LF exist and parsers commonly accept them: the old `nuget` client ends the
 * package part with a bare LF before the closing boundary, which undici's strict parser refuses.
 * A boundary never occurs inside a part, so only delimiters change; a conforming body comes back
 * as it was (same bytes). Used for the relayed body too, so the upstream sees a conforming one.
 * @example crlfDelimiters(Buffer.from('--b\r\n...\n--b--\r\n'), 'multipart/form-data; boundary=b')
 */
export function crlfDelimiters(body: Buffer, contentType: string): Buffer {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType)
  const value = boundary?.[1] ?? boundary?.[2]
  if (!value) return body
  const dashes = Buffer.from(`--${value}`, 'latin1')
  const pieces: Buffer[] = []
  let from = 0
  for (let at = body.indexOf(dashes); at >= 0; at = body.indexOf(dashes, at + dashes.length)) {
    // Before the delimiter: a bare LF (not the body's first line) becomes CRLF.
    if (at > 0 && body[at - 1] === 0x0a && body[at - 2] !== 0x0d) {
      pieces.push(body.subarray(from, at - 1), Buffer.from('\r\n'))
      from = at
    }
    // After it (past a closing `--`): a bare LF ending the boundary line becomes CRLF.
    let end = at + dashes.length
    if (body[end] === 0x2d && body[end + 1] === 0x2d) end += 2
    if (body[end] === 0x0a) {
      pieces.push(body.subarray(from, end), Buffer.from('\r\n'))
      from = end + 1
    }
  }
  if (from === 0) return body
  pieces.push(body.subarray(from))
  return Buffer.concat(pieces)
}

/** The text value of a form field, or undefined. */
export function formField(parts: readonly FormPart[], name: string): string | undefined {
  const part = parts.find((p) => p.name === name && p.filename === undefined)
  return part?.data.toString('utf8')
}
