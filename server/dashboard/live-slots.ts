/** Live streams one process serves at most when `DASHBOARD_LIVE_STREAMS` is unset. */
export const DEFAULT_LIVE_STREAMS = 1000

/**
 * Parses `DASHBOARD_LIVE_STREAMS` (a positive whole number); throws naming the variable, so an
 * invalid value stops the start.
 * @example parseLiveStreamLimit('50') // 50
 */
export function parseLiveStreamLimit(text: string | undefined): number {
  const value = text?.trim()
  if (!value) return DEFAULT_LIVE_STREAMS
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value)))
    throw new Error(`DASHBOARD_LIVE_STREAMS: expected a positive integer, got "${text}"`)
  return Number(value)
}

/**
 * The open live streams (server-sent events) of one process, at most `limit`: each holds a
 * timer, a subscription and a socket for as long as its browser tab stays open, so without a
 * bound a crowd of tabs (or a client opening streams in a loop) would grow memory without end.
 * @example const release = slots.take(); if (!release) refuse(); else stream.onClosed(release)
 */
export class LiveStreamSlots {
  private open = 0

  constructor(readonly limit: number) {}

  /** A slot, or null when `limit` streams are open; the returned release is safe to call twice. */
  take(): (() => void) | null {
    if (this.open >= this.limit) return null
    this.open++
    let released = false
    return () => {
      if (released) return
      released = true
      this.open--
    }
  }

  /** Streams open now. */
  get size(): number {
    return this.open
  }
}
