import { notFound } from '../../common/errors'
import { requireNamespacePermission } from '../../auth/permissions'
import type { WebhookCall } from '../ports'
import { generateSecret } from '../protocol/signing'
import type { WebhookRecord } from './model'
import { configEvent, loadWebhook, signalChange } from './crud'

/** A webhook's signing secret: reveal and rotation (the overlap keeps the previous one signing). */

/** `GET .../secret`: the current secret; a manager's action, audited as a read. */
export async function revealSecret(ctx: WebhookCall, id: string): Promise<{ secret: string }> {
  requireNamespacePermission(ctx.principal, 'ns:webhooks:manage')
  return { secret: (await loadWebhook(ctx, id)).secret }
}

/** A new secret; the previous one keeps signing (second signature) for `WEBHOOK_SECRET_OVERLAP`. */
export async function rotateSecret(
  ctx: WebhookCall,
  id: string,
): Promise<{ secret: string; previousSecretValidUntil: string }> {
  requireNamespacePermission(ctx.principal, 'ns:webhooks:manage')
  const { settings } = ctx.services.webhookRuntime
  const { webhooks } = ctx.services
  const now = ctx.services.clock.now()
  const record = await webhooks.mutate(ctx.ns, id, (current) => {
    if (!current) throw notFound('webhook', id)
    const next: WebhookRecord = {
      ...current,
      secret: generateSecret(),
      previousSecret: current.secret,
      previousSecretValidUntil: new Date(now + settings.secretOverlapMs).toISOString(),
      secretRotatedAt: new Date(now).toISOString(),
      updatedAt: new Date(now).toISOString(),
    }
    return { next, also: () => ({ events: [configEvent(ctx, 'config.webhook.updated', next)] }), result: next }
  })
  await signalChange(ctx, 'changed', id)
  return { secret: record.secret, previousSecretValidUntil: record.previousSecretValidUntil! }
}
