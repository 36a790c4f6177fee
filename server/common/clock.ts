/** Injected time source, so expiry, backoff and retention are testable without waiting. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

export const isoTime = (clock: Clock): string => new Date(clock.now()).toISOString()
