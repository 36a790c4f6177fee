/**
 * A complete webhook receiver: `WEBHOOK_SECRET=whsec_... PORT=8080 npm run example:receiver`.
 * WEBHOOK_SECRET may list several secrets, comma-separated (during a rotation); with REDIS_URL set,
 * what was handled is remembered in Redis (across restarts and processes), else in memory.
 */
import { createServer } from 'node:http'
import { createReceiver, MemoryStore, RedisStore, toNodeListener } from '../receiver'

const receiver = createReceiver({
  secrets: (process.env.WEBHOOK_SECRET ?? '').split(',').filter(Boolean),
  store: process.env.REDIS_URL ? new RedisStore({ redis: process.env.REDIS_URL }) : new MemoryStore(),
  async onEvent(event, { deliveryId }) {
    // `event` is typed: switching on `type` narrows `data`.
    if (event.type === 'firewall.blocked') console.log(`blocked ${event.data.packageName}@${event.data.version}`)
    else if (event.type === 'webhook.test') console.log(`test event ${event.id} for webhook ${event.data.webhook}`)
    else console.log(`${event.type} ${event.id} (delivery ${deliveryId})`)
  },
})
const port = Number(process.env.PORT ?? 8080)
createServer(toNodeListener(receiver)).listen(port, () =>
  console.log(`receiving webhooks on http://localhost:${port}/`),
)
