import { TimeSlice } from '../../common/time-slice'

/** An upstream answer read whole: its bytes as they came (for the cache) and its text. */
export interface UpstreamBody {
  chunks: Uint8Array[]
  text: string
}

/**
 * The body of an upstream answer, decoded as UTF-8 chunk by chunk as it streams in (as
 * `response.text()` decodes it, a leading BOM dropped), so a 64 MB answer is never decoded in one
 * go. Errors of the stream pass through (`UpstreamTooLarge` from body-limit.ts, a broken connection).
 * @example const { text } = await readUpstreamBody(response)
 */
export async function readUpstreamBody(response: Response, slice = new TimeSlice()): Promise<UpstreamBody> {
  const chunks: Uint8Array[] = []
  const parts: string[] = []
  if (response.body) {
    const decoder = new TextDecoder()
    for await (const chunk of response.body) {
      chunks.push(chunk)
      parts.push(decoder.decode(chunk, { stream: true }))
      await slice.step()
    }
    parts.push(decoder.decode())
  }
  return { chunks, text: parts.join('') }
}

/** The text of an upstream answer, read as `readUpstreamBody` reads it. */
export async function upstreamText(response: Response): Promise<string> {
  return (await readUpstreamBody(response)).text
}
