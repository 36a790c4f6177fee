import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'

/** A fresh secret in the service's format. */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`

/** Standard Webhooks headers for `body`, signed by the reference package with each of `secrets`. */
export function signedHeaders(
  body: string,
  secrets: string[],
  id = `whdel-${randomBytes(8).toString('hex')}`,
  at = Date.now(),
): Record<string, string> {
  const signature = secrets.map((secret) => new Webhook(secret).sign(id, new Date(at), body)).join(' ')
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at / 1000)),
    'webhook-signature': signature,
    'content-type': 'application/json',
  }
}

let counter = 0
/** A config.firewall.updated event as the service sends it. */
export function firewallEvent(firewall = 'fw', id = `evt-${Date.now().toString(36)}${(counter++).toString(36)}`) {
  return {
    id,
    type: 'config.firewall.updated' as const,
    time: new Date().toISOString(),
    namespace: 'default',
    data: { firewall, version: 2, ecosystem: 'npm' as const, actor: { userId: 'u' }, config: {} },
  }
}

export const envelope = (events: object[]) => JSON.stringify({ version: 1, events })
