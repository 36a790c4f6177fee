/** One part of a `multipart/form-data` body. */
export interface FormPart {
  name: string
  filename?: string
  contentType?: string
  data: Buffer
}

/**
 * Splits a `multipart/form-data` body (RFC 7578) held in memory into its parts. Returns null
 * when the content type has no boundary or the body does not follow it. Used by PyPI legacy
 * uploads and NuGet pushes, which are small enough to hold (the proxy bounds the body).
 * @example parseMultipart(body, req.headers['content-type'])?.find((p) => p.name === 'content')
 */
export function parseMultipart(body: Buffer, contentType: string | undefined): FormPart[] | null {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '')
  if (!/^multipart\/form-data/i.test(contentType ?? '') || !boundary) return null
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`)
  const parts: FormPart[] = []
  let at = body.indexOf(delimiter)
  if (at < 0) return null
  for (;;) {
    const start = at + delimiter.length
    // `--` after a delimiter closes the body.
    if (body.subarray(start, start + 2).toString() === '--') return parts
    const next = body.indexOf(delimiter, start)
    if (next < 0) return null
    const part = body.subarray(start, next)
    const headerEnd = part.indexOf('\r\n\r\n')
    if (headerEnd < 0) return null
    const headers = part.subarray(0, headerEnd).toString('utf8')
    // The part's data ends before the CRLF that precedes the next delimiter.
    const data = part.subarray(headerEnd + 4, part.length - 2)
    const disposition = /content-disposition:([^\r\n]*)/i.exec(headers)?.[1] ?? ''
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1] ?? /\bname=([^;\s]+)/i.exec(disposition)?.[1]
    if (name !== undefined) {
      const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1] ?? /\bfilename=([^;\s]+)/i.exec(disposition)?.[1]
      const type = /content-type:\s*([^\r\n]*)/i.exec(headers)?.[1]
      parts.push({ name, data, ...(filename !== undefined ? { filename } : {}), ...(type ? { contentType: type.trim() } : {}) })
    }
    at = next
  }
}

/** The text value of a form field, or undefined. */
export function formField(parts: readonly FormPart[], name: string): string | undefined {
  const part = parts.find((p) => p.name === name && p.filename === undefined)
  return part?.data.toString('utf8')
}
