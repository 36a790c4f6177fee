/** Conditional download of one feed archive (ETag / If-Modified-Since). */

export interface FeedValidators {
  etag?: string
  lastModified?: string
}

export type FeedAnswer =
  | { kind: 'not-modified' }
  | { kind: 'changed'; body: AsyncIterable<Uint8Array>; etag?: string; lastModified?: string; abort(): void }

/** Fetches the archive at `url`; injectable so tests and the CLI share the worker. */
export type FeedFetcher = (url: string, validators: FeedValidators) => Promise<FeedAnswer>

/** The download failed; `message` is safe to show (no URL, no credentials). */
export class FeedError extends Error {}

interface FeedClientOptions {
  /** Until the answer's headers arrive. Default 30 s. */
  headersTimeoutMs?: number
  /** Longest pause between two body chunks. Default 60 s. */
  idleTimeoutMs?: number
}

/** The network reason of a failed fetch (`ECONNREFUSED`, `ENOTFOUND`, ...), without addresses. */
function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause
  if (cause?.code) return cause.code
  if ((error as Error)?.name === 'AbortError' || (error as Error)?.name === 'TimeoutError') return 'timed out'
  return cause?.message || (error as Error)?.message || String(error)
}

async function* guardedBody(
  body: ReadableStream<Uint8Array>,
  controller: AbortController,
  idleTimeoutMs: number,
): AsyncIterable<Uint8Array> {
  let timer = setTimeout(() => controller.abort(), idleTimeoutMs)
  try {
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      clearTimeout(timer)
      timer = setTimeout(() => controller.abort(), idleTimeoutMs)
      yield chunk
    }
  } catch (error) {
    throw new FeedError(`feed download broke off (${reasonOf(error)})`)
  } finally {
    clearTimeout(timer)
  }
}

/**
 * A fetcher over global fetch with timeouts: 304 is `not-modified`, a 2xx is the body as a
 * stream (read as it arrives, never whole), anything else a `FeedError`. The feed URL is the
 * operator's own setting, so no address policy applies.
 * @example const answer = await httpFeedFetcher()(url, { etag: '"abc"' })
 */
export function httpFeedFetcher(options: FeedClientOptions = {}): FeedFetcher {
  const headersTimeoutMs = options.headersTimeoutMs ?? 30_000
  const idleTimeoutMs = options.idleTimeoutMs ?? 60_000
  return async (url, validators) => {
    const controller = new AbortController()
    const headers: Record<string, string> = { accept: 'application/zip' }
    if (validators.etag) headers['if-none-match'] = validators.etag
    if (validators.lastModified) headers['if-modified-since'] = validators.lastModified
    const timer = setTimeout(() => controller.abort(), headersTimeoutMs)
    let response: Response
    try {
      response = await fetch(url, { headers, signal: controller.signal, redirect: 'follow' })
    } catch (error) {
      throw new FeedError(`feed unreachable (${reasonOf(error)})`)
    } finally {
      clearTimeout(timer)
    }
    if (response.status === 304) {
      await response.body?.cancel().catch(() => undefined)
      return { kind: 'not-modified' }
    }
    if (!response.ok || !response.body) {
      await response.body?.cancel().catch(() => undefined)
      throw new FeedError(`feed answered ${response.status}`)
    }
    return {
      kind: 'changed',
      body: guardedBody(response.body, controller, idleTimeoutMs),
      etag: response.headers.get('etag') ?? undefined,
      lastModified: response.headers.get('last-modified') ?? undefined,
      abort: () => controller.abort(),
    }
  }
}
