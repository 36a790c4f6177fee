/**
 * undici, loaded at its first use instead of at start-up: about 0.1 s of CPU that a process which
 * never calls an upstream or parses an upload (the admin CLI, most test servers) does not pay.
 * Every user goes through this one promise, so later uses cost no module lookup.
 */
let loaded: Promise<typeof import('undici')> | null = null

export const loadUndici = (): Promise<typeof import('undici')> => (loaded ??= import('undici'))
