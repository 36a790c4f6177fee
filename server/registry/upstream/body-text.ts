import { TimeSlice } from '../../common/time-slice'

/** An upstream answer read whole: its bytes as they came (for the cache) and its text, as decoded. */
export interface UpstreamBody {
  chunks: Uint8Array[]
  /** The text, a piece per chunk: never joined, so a 64 MB answer is never one 64 MB string. */
  pieces: string[]
}

/**
 * The body of an upstream answer, decoded as UTF-8 chunk by chunk as it streams in (as
 * `response.text()` decodes it, a leading BOM dropped), so a 64 MB answer is never decoded in one
 * go. Errors of the stream pass through (`UpstreamTooLarge` from body-limit.ts, a broken connection).
 * @example const { pieces } = await readUpstreamBody(response) // parseJsonCooperatively(pieces)
 */
export async function readUpstreamBody(response: Response, slice = new TimeSlice()): Promise<UpstreamBody> {
  const chunks: Uint8Array[] = []
  const pieces: string[] = []
  if (response.body) {
    const decoder = new TextDecoder()
    for await (const chunk of response.body) {
      chunks.push(chunk)
      pieces.push(decoder.decode(chunk, { stream: true }))
      await slice.step()
    }
    pieces.push(decoder.decode())
  }
  return { chunks, pieces }
}

/** The text of an upstream answer in pieces, read as `readUpstreamBody` reads it (for JSON). */
export async function upstreamPieces(response: Response): Promise<string[]> {
  return (await readUpstreamBody(response)).pieces
}

/** The text of an upstream answer as one string (an HTML page: its reader needs it whole). */
export async function upstreamText(response: Response): Promise<string> {
  return (await upstreamPieces(response)).join('')
}
