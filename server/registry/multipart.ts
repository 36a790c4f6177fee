import { Response } from 'undici'

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
  try {
    form = await new Response(body, { headers: { 'content-type': contentType } }).formData()
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

/** The text value of a form field, or undefined. */
export function formField(parts: readonly FormPart[], name: string): string | undefined {
  const part = parts.find((p) => p.name === name && p.filename === undefined)
  return part?.data.toString('utf8')
}
