/**
 * Whether this process owns its port yet. Work that takes leases (webhook engine, log
 * retention) waits for it, so a second process started on a busy port exits before it could
 * take one. The server entry (server/app/node-server.ts) reports the outcome of `listen`.
 */
let reported = false
let resolveListening: () => void = () => undefined
const listening = new Promise<void>((resolve) => (resolveListening = resolve))

/** The entry announces, before any plugin's start-up continues, that it will report when it listens. */
export function expectListening(): void {
  reported = true
}

export function markListening(): void {
  resolveListening()
}

/**
 * Resolves once the server listens; at once where nothing reports it (`nitro dev`, whose
 * entry is Nitro's own).
 */
export function whenListening(): Promise<void> {
  return reported ? listening : Promise.resolve()
}
