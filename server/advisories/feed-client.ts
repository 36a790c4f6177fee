/** Conditional download of one feed archive (ETag / If-Modified-Since). */

export interface FeedValidators {
  etag?: string
  lastModified?: string
}

/**
 * One conditional download, as plain data: it is posted to the loader thread, which fetches.
 * The feed URL is the operator's own setting, so no upstream address policy applies to it.
 */
export interface FeedRequest {
  url: string
  validators: FeedValidators
  /** Until the answer's headers arrive. */
  headersTimeoutMs: number
  /** Longest pause between two body chunks. */
  idleTimeoutMs: number
  /** A `Range` to ask for (`bytes=-65536`, `bytes=0-99`); the answer may still be the whole archive. */
  range?: string
  /** Only this version of the archive (`If-Match`), for the ranges that follow a first one. */
  ifMatch?: string
  /** `ADVISORY_MAX_ENTRIES`: an archive with more entries is refused while it is read. */
  maxEntries?: number
}

export const FEED_HEADERS_TIMEOUT_MS = 30_000
export const FEED_IDLE_TIMEOUT_MS = 60_000

/** The part a `206` holds: bytes `start` to `end` (inclusive) of an archive of `total` bytes. */
export interface ContentRange {
  start: number
  end: number
  total: number
}

export type FeedAnswer =
  | { kind: 'not-modified' }
  | {
      kind: 'changed'
      body: AsyncIterable<Uint8Array>
      etag?: string
      lastModified?: string
      /** Set when the answer is the range asked for (206), absent when it is the whole archive. */
      part?: ContentRange
      /** Drops a body that will not be read (its connection is released). */
      cancel(): Promise<void>
    }

/** `bytes 0-99/1234` as numbers; null when it is not that form (`*` totals included). */
function contentRange(header: string | null): ContentRange | null {
  const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header?.trim() ?? '')
  if (!match) return null
  const [start, end, total] = [Number(match[1]), Number(match[2]), Number(match[3])]
  return start <= end && end < total ? { start, end, total } : null
}

/** The download failed; `message` is safe to show (no URL, no credentials). */
export class FeedError extends Error {}

/**
 * The network reason of a failed fetch (`ECONNREFUSED`, `ENOTFOUND`, ...), without addresses. An
 * abort is `stopped` when the caller asked for it (the service stopping), `timed out` otherwise.
 */
function reasonOf(error: unknown, signal: AbortSignal | undefined): string {
  if (signal?.aborted) return 'stopped'
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause
  if (cause?.code) return cause.code
  if ((error as Error)?.name === 'AbortError' || (error as Error)?.name === 'TimeoutError') return 'timed out'
  return cause?.message || (error as Error)?.message || String(error)
}

async function* guardedBody(
  body: ReadableStream<Uint8Array>,
  controller: AbortController,
  idleTimeoutMs: number,
  signal: AbortSignal | undefined,
): AsyncIterable<Uint8Array> {
  let timer = setTimeout(() => controller.abort(), idleTimeoutMs)
  try {
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      clearTimeout(timer)
      timer = setTimeout(() => controller.abort(), idleTimeoutMs)
      yield chunk
    }
  } catch (error) {
    throw new FeedError(`feed download broke off (${reasonOf(error, signal)})`)
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Fetches the archive with global fetch and the request's timeouts: 304 is `not-modified`, a 2xx
 * is the body as a stream (read as it arrives, never whole; a 206 with the part it holds), anything
 * else a `FeedError` (a 412 when `ifMatch` no longer holds).
 * `signal` aborts it (the service stopping).
 * @example const answer = await fetchFeed({ url, validators: { etag: '"abc"' }, headersTimeoutMs, idleTimeoutMs })
 */
export async function fetchFeed(request: FeedRequest, signal?: AbortSignal): Promise<FeedAnswer> {
  const controller = new AbortController()
  signal?.addEventListener('abort', () => controller.abort(), { once: true })
  if (signal?.aborted) controller.abort()
  const headers: Record<string, string> = { accept: 'application/zip' }
  const { validators } = request
  if (validators.etag) headers['if-none-match'] = validators.etag
  if (validators.lastModified) headers['if-modified-since'] = validators.lastModified
  if (request.range) headers.range = request.range
  if (request.ifMatch) headers['if-match'] = request.ifMatch
  const timer = setTimeout(() => controller.abort(), request.headersTimeoutMs)
  let response: Response
  try {
    response = await fetch(request.url, { headers, signal: controller.signal, redirect: 'follow' })
  } catch (error) {
    throw new FeedError(`feed unreachable (${reasonOf(error, signal)})`)
  } finally {
    clearTimeout(timer)
  }
  if (response.status === 304) {
    await response.body?.cancel().catch(() => undefined)
    return { kind: 'not-modified' }
  }
  const part = response.status === 206 ? contentRange(response.headers.get('content-range')) : undefined
  if (!response.ok || !response.body || part === null || (response.status === 206 && !request.range)) {
    await response.body?.cancel().catch(() => undefined)
    throw new FeedError(`feed answered ${response.status}`)
  }
  return {
    kind: 'changed',
    body: guardedBody(response.body, controller, request.idleTimeoutMs, signal),
    etag: response.headers.get('etag') ?? undefined,
    lastModified: response.headers.get('last-modified') ?? undefined,
    ...(part ? { part } : {}),
    cancel: async () => {
      controller.abort()
      await response.body?.cancel().catch(() => undefined)
    },
  }
}
