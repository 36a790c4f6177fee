import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import Redis from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { redisUrl, uniquePrefix } from '../support/redis'
import { apiClient, freePort, startServer, type Api, type RunningServer } from '../support/server'
import { waitFor } from '../webhooks/support/built-server'

const APP = fileURLToPath(new URL('./fixtures/app-receiver.ts', import.meta.url))
const token = `fwp_${randomBytes(30).toString('hex').slice(0, 43)}`

/** The application process: resolves once it listens. */
async function startApp(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', APP], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => ((output += chunk), output.includes('listening') && resolve()))
    child.stderr!.on('data', (chunk) => (output += chunk))
    child.once('exit', (code) => reject(new Error(`receiver exited (${code}):\n${output}`)))
  })
  return child
}

const firewall = { ecosystem: 'npm', upstreams: [{ id: 'npmjs', endpoint: 'https://registry.npmjs.org' }] }

let server: RunningServer
let api: Api
let redis: Redis
let blocking: Redis
const prefix = `${uniquePrefix('recv-kill')}:`
const children: ChildProcess[] = []

beforeAll(async () => {
  // Retries 1 s apart: the restarted receiver gets the batch again within seconds.
  server = await startServer({
    BOOTSTRAP_TOKEN: token,
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
    WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s',
  })
  api = apiClient(server.url, token)
  redis = new Redis(await redisUrl())
  blocking = redis.duplicate()
})
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  await server?.stop()
  const keys = await redis.keys(`${prefix}*`)
  if (keys.length) await redis.del(...keys)
  redis.disconnect()
  blocking.disconnect()
})

/** The next firewall name a receiver handler announced (waits on Redis, no polling). */
async function announced(): Promise<string> {
  const popped = await blocking.blpop(`${prefix}progress`, 30)
  if (!popped) throw new Error('no handler announced itself within 30 s')
  return popped[1]
}

describe('a receiver killed mid-batch and restarted (built service, kit with the Redis store)', () => {
  it('handles every event exactly once: the retried batch resumes after the last handled event', async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/hook`
    const created = await api('POST', '/v1/default/webhooks', { name: 'app', url, eventTypes: ['config.firewall.*'] })
    expect(created.status).toBe(201)
    const appEnv = {
      PORT: String(port),
      WEBHOOK_SECRET: created.body.secret,
      REDIS_URL: await redisUrl(),
      PREFIX: prefix,
    }
    const first = await startApp({ ...appEnv, GATE: 'fw-gate', HANG: 'fw-5' })
    children.push(first)

    // A first delivery holds the gate, so that eight more events queue up and travel as one batch.
    expect((await api('PUT', '/v1/default/config/fw-gate', firewall)).status).toBe(201)
    expect(await announced()).toBe('fw-gate')
    const names = Array.from({ length: 8 }, (_, i) => `fw-${i + 1}`)
    for (const name of names) expect((await api('PUT', `/v1/default/config/${name}`, firewall)).status).toBe(201)
    const state = async () => (await api('GET', `/v1/default/webhooks/${created.body.id}/state`)).body.bufferedEvents
    // The count includes the batch in flight (the gate event).
    await waitFor(async () => (await state()) === names.length + 1, 15_000, 'eight events buffered')
    await redis.rpush(`${prefix}gate`, 'open')

    // The batch fw-1..fw-8 arrives; the handler of fw-5 hangs: kill the process there.
    expect(await announced()).toBe('fw-5')
    const handledBefore = await redis.hgetall(`${prefix}handled`)
    expect(Object.keys(handledBefore)).toHaveLength(5) // the gate event and fw-1..fw-4
    first.kill('SIGKILL')
    await new Promise((resolve) => first.once('exit', resolve))

    const second = await startApp(appEnv)
    children.push(second)
    await waitFor(async () => (await redis.hlen(`${prefix}handled`)) === 9, 30_000, 'the retried batch handled')

    // Each event's side effect happened once, in the process and delivery expected.
    const handled = await redis.hgetall(`${prefix}handled`)
    expect(Object.values(handled)).toEqual(Array(9).fill('1'))
    const who = new Map(
      Object.values(await redis.hgetall(`${prefix}who`)).map((line) => {
        const [pid, delivery, name] = line.split(' ')
        return [name, { pid: Number(pid), delivery }]
      }),
    )
    expect(who.get('fw-gate')!.pid).toBe(first.pid)
    for (const name of names) expect(who.get(name)!.pid, name).toBe(names.indexOf(name) < 4 ? first.pid : second.pid)
    const batch = new Set(names.map((name) => who.get(name)!.delivery))
    expect(batch.size).toBe(1)
    const [batchId] = batch
    expect(batchId).not.toBe(who.get('fw-gate')!.delivery)

    // The sender saw one delivery of eight events, retried under the same webhook-id until it succeeded.
    const record = async () => (await api('GET', `/v1/default/webhooks/${created.body.id}/deliveries/${batchId}`)).body
    await waitFor(async () => (await record()).status === 'success', 15_000, 'the batch recorded as delivered')
    const final = await record()
    expect(final.attempts).toBeGreaterThanOrEqual(2)
    expect(final.eventCount).toBe(8)
    expect(await redis.hlen(`${prefix}handled`)).toBe(9)
  })
})
