/** Larger than any delivery the sender makes (512 KB of events at most) with room to spare. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024

export interface AdapterOptions {
  /** Bodies over this many bytes are answered 413 unread (default 1 MiB). */
  maxBodyBytes?: number
}

export const methodNotAllowed = { status: 405, headers: { allow: 'POST' }, body: '' }
export const tooLarge = (limit: number) => ({
  status: 413,
  headers: { 'content-type': 'application/problem+json' },
  body: JSON.stringify({
    type: 'about:blank',
    title: 'body too large',
    status: 413,
    code: 'body_too_large',
    detail: `over ${limit} bytes`,
  }),
})
