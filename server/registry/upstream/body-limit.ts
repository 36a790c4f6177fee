import { RegistryError } from '../responses'

/** The size bounds of upstream answers (CONTRACT section 1, `UPSTREAM_MAX_BODY`). */
export interface UpstreamBodyLimits {
  /** `UPSTREAM_MAX_BODY`: packuments, indexes, JSON APIs, publish answers. */
  metadata: number
  /** `UPSTREAM_MAX_ARTIFACT`: tarballs, wheels, jars, nupkgs. */
  artifact: number
}

export type UpstreamBodyKind = keyof UpstreamBodyLimits

export const DEFAULT_UPSTREAM_BODY_LIMITS: UpstreamBodyLimits = { metadata: 64 * 1024 ** 2, artifact: 512 * 1024 ** 2 }

const SETTING: Record<UpstreamBodyKind, string> = { metadata: 'UPSTREAM_MAX_BODY', artifact: 'UPSTREAM_MAX_ARTIFACT' }

/** An upstream answer larger than its bound: 502 naming the setting. Nothing read from it is kept. */
export class UpstreamTooLarge extends RegistryError {
  constructor(
    readonly upstream: string,
    readonly kind: UpstreamBodyKind,
    readonly limit: number,
  ) {
    super(502, `the answer of upstream ${upstream} is larger than ${SETTING[kind]} (${limit} bytes); it was refused`)
  }
}

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304])

/**
 * The response with a body that cannot grow past the bound: a declared `Content-Length` over it
 * throws at once (the body is not read), and bytes are counted as they stream, so a reader of
 * `text()`, `json()` or `arrayBuffer()` gets `UpstreamTooLarge` instead of the memory to hold it.
 * @example const bounded = limitUpstreamBody(response, 'npmjs', 'metadata', transport.limits)
 */
export function limitUpstreamBody(
  response: Response,
  upstream: string,
  kind: UpstreamBodyKind,
  limits: UpstreamBodyLimits,
): Response {
  const limit = limits[kind]
  const declared = Number(response.headers.get('content-length') ?? NaN)
  if (declared > limit) {
    void response.body?.cancel().catch(() => undefined)
    throw new UpstreamTooLarge(upstream, kind, limit)
  }
  if (!response.body || NULL_BODY_STATUSES.has(response.status)) return response
  let seen = 0
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength
      if (seen > limit) controller.error(new UpstreamTooLarge(upstream, kind, limit))
      else controller.enqueue(chunk)
    },
  })
  const bounded = new Response(response.body.pipeThrough(counter), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  })
  // Relative links in an index resolve against the URL the answer came from (after redirects).
  Object.defineProperty(bounded, 'url', { value: response.url })
  return bounded
}
