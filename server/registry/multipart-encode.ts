import { randomBytes } from 'node:crypto'

/** A part to write: a text field (no `filename`) or a file. */
interface EncodablePart {
  name: string
  filename?: string
  contentType?: string
  data: Buffer
}

// The form-data encoding's escapes for names in a Content-Disposition header (WHATWG HTML).
const escapeHeaderValue = (text: string) => text.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22')
const MEDIA_TYPE = /^[\x21-\x7e][\x20-\x7e]*$/

/**
 * Writes parts as a `multipart/form-data` body (RFC 7578) under a fresh boundary. An upload
 * is forwarded as the parts the firewall read and judged, re-encoded, never as the bytes the
 * client sent: a body two parsers read differently (a repeated part, `filename*`, a boundary
 * quirk) cannot make the upstream store another file than the one that was decided on. Part
 * data is copied byte for byte; only the framing is new.
 * @example const { body, contentType } = encodeMultipart(parts)
 */
export function encodeMultipart(parts: readonly EncodablePart[]): { body: Buffer; contentType: string } {
  let boundary = `package-firewall-${randomBytes(16).toString('hex')}`
  // 128 random bits will not occur in the data; checked all the same, as the cost is one scan.
  while (parts.some((part) => part.data.includes(boundary)))
    boundary = `package-firewall-${randomBytes(16).toString('hex')}`
  const chunks: Buffer[] = []
  for (const part of parts) {
    const filename = part.filename === undefined ? '' : `; filename="${escapeHeaderValue(part.filename)}"`
    const type =
      part.filename === undefined
        ? ''
        : `\r\nContent-Type: ${part.contentType && MEDIA_TYPE.test(part.contentType) ? part.contentType : 'application/octet-stream'}`
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${escapeHeaderValue(part.name)}"${filename}${type}\r\n\r\n`,
        'utf8',
      ),
      part.data,
      Buffer.from('\r\n'),
    )
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` }
}
