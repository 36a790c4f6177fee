import { connect, createServer, type Server } from 'node:net'
import { hostname } from 'node:os'
import Redis from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { redisUrl, uniquePrefix } from '../support/redis'
import { freePort, runServerUntilExit, startServer, type RunningServer } from '../support/server'

/**
 * Finding 7, start: a second process started on a port in use exits
 * non-zero at once, before it takes any lease. Before the fix it logged EADDRINUSE, kept
 * running and took webhook and retention leases from the storage it shares with the first.
 */

const TOKEN = 'fwp_busyPortOwnerToken0123456789abcdefghij'
/** Generous on a busy 2-core machine; the process needs about two seconds to load. */
const EXIT_WITHIN_MS = 20_000

/**
 * Every command Redis executes while `during` runs, one MONITOR line each (a plain socket:
 * the lines are only searched for lease owner ids).
 */
async function commandsDuring<T>(url: string, during: () => Promise<T>): Promise<{ result: T; commands: string[] }> {
  const { hostname: host, port } = new URL(url)
  const socket = connect(Number(port || 6379), host)
  let text = ''
  socket.on('data', (chunk) => (text += chunk))
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  socket.write('MONITOR\r\n')
  // MONITOR answers +OK before it streams commands.
  while (!text.startsWith('+OK')) await new Promise((r) => socket.once('data', r))
  try {
    const result = await during()
    return { result, commands: text.split('\r\n').filter((line) => line.startsWith('+') && line !== '+OK') }
  } finally {
    socket.destroy()
  }
}

/** Lease keys under `prefix` and their owners. */
async function leaseOwners(url: string, prefix: string): Promise<Map<string, string>> {
  const client = new Redis(url)
  try {
    const keys = await client.keys(`${prefix}*lease:*`)
    const owners = keys.length ? await client.mget(...keys) : []
    return new Map(keys.map((key, i) => [key, owners[i] ?? '']))
  } finally {
    client.disconnect()
  }
}

const ownerOf = (pid: number) => `${hostname()}:${pid}:`

describe('a second process on a busy port', () => {
  let url: string
  let prefix: string
  let first: RunningServer
  let env: Record<string, string>

  beforeAll(async () => {
    url = await redisUrl()
    prefix = uniquePrefix('busy-port')
    // Short lease and retention periods: the first process renews its leases while the second runs.
    env = {
      REDIS_URL: url,
      REDIS_PREFIX: prefix,
      BOOTSTRAP_TOKEN: TOKEN,
      WEBHOOK_LEASE: '1s',
      LOG_RETENTION_INTERVAL: '1s',
    }
    first = await startServer(env)
    const created = await fetch(`${first.url}/v1/default/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'sink', url: 'https://hooks.example.com/in', eventTypes: ['config.*'] }),
    })
    expect(created.status).toBe(201)
  }, 120_000)
  afterAll(async () => {
    await first?.stop()
  })

  it('exits non-zero at once and never asks for a lease, while the first keeps serving', async () => {
    const { result: second, commands } = await commandsDuring(url, () =>
      runServerUntilExit({ LOG_LEVEL: 'info', ...env }, first.port, EXIT_WITHIN_MS),
    )
    expect(second.code, second.output).toBe(1)
    expect(second.elapsedMs).toBeLessThan(EXIT_WITHIN_MS)
    expect(second.output).toContain('EADDRINUSE')
    const mine = ownerOf(second.pid)
    // The monitor did see lease traffic: the first process renewing its own leases meanwhile.
    expect(commands.some((line) => line.includes(ownerOf(first.process.pid!)))).toBe(true)
    expect(commands.filter((line) => line.includes(mine))).toEqual([])
    for (const owner of (await leaseOwners(url, prefix)).values()) expect(owner.startsWith(mine)).toBe(false)
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200)
  })

  it('holds no lease when the port belongs to another program and it is alone on the storage', async () => {
    const blocker: Server = createServer()
    const port = await freePort()
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve))
    try {
      const alone = { ...env, REDIS_PREFIX: uniquePrefix('busy-port-alone') }
      const { result: second, commands } = await commandsDuring(url, () =>
        runServerUntilExit({ LOG_LEVEL: 'info', ...alone }, port, EXIT_WITHIN_MS),
      )
      expect(second.code, second.output).toBe(1)
      expect(commands.filter((line) => line.includes(ownerOf(second.pid)))).toEqual([])
      expect([...(await leaseOwners(url, alone.REDIS_PREFIX)).keys()]).toEqual([])
    } finally {
      await new Promise((resolve) => blocker.close(resolve))
    }
  })
})
