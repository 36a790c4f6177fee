import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openBackend, StorageSettingError, type Backend } from '../../storage'
import { clusterAccess } from '../../storage/redis-target'
import { keys } from '../../storage/repositories/keys'
import { startRedisCluster, type RedisClusterHandle } from '../support/redis-cluster'
import { startServer } from '../support/server'
import { uniquePrefix } from '../support/redis'

/**
 * A Redis Cluster as managed offerings run one: every node asks for a password and speaks only
 * TLS (a CA of the test's own). The service reaches it through REDIS_CLUSTER_PASSWORD and
 * REDIS_CLUSTER_TLS_CA, and a start that cannot use it says why, never with the password.
 */

const PASSWORD = 'cluster-Pa55-word'
let cluster: RedisClusterHandle
let ca: string

beforeAll(async () => {
  cluster = await startRedisCluster(3, { password: PASSWORD, tls: true })
  ca = readFileSync(cluster.caFile!, 'utf8')
}, 60_000)
afterAll(async () => cluster?.stop())

describe('Redis Cluster with a password and TLS', () => {
  it('stores, transacts and notifies across the masters with the password and the CA', async () => {
    const backend: Backend = await openBackend({
      redisClusterNodes: cluster.nodes,
      redisPrefix: uniquePrefix('access'),
      redisClusterAccess: { password: PASSWORD, tls: { ca } },
    })
    try {
      const notified = new Promise<string>((resolve) => backend.signals.onEvents(resolve))
      await backend.signals.eventsReady()
      // Namespaces land on different masters: the listing scans every one of them.
      const docs = ['a', 'b', 'c', 'd'].map((ns) => keys.namespace(ns))
      for (const key of docs) await backend.keyValue.set(key, { key })
      expect((await backend.keyValue.keys('ns')).filter((key) => docs.includes(key)).sort()).toEqual([...docs].sort())
      const event = { id: 'ev-1', type: 'audit.test.ping', time: new Date().toISOString(), namespace: 'a' } as never
      await backend.keyValue.transact([keys.namespace('a')], () => ({ writes: { events: [event] }, result: undefined }))
      expect(await notified).toBe('a')
      expect(await backend.logs.length(keys.eventLog('a'))).toBe(1)
    } finally {
      await backend.close()
    }
  })

  it.each([
    // Functions: the CA is read once the cluster started.
    ['no password', () => ({ tls: { ca } }), /NOAUTH/],
    ['a wrong password', () => ({ password: 'not-it', tls: { ca } }), /WRONGPASS/],
    ['no TLS', () => ({ password: PASSWORD }), /ECONNRESET|Connection is closed/],
    ['an unknown CA', () => ({ password: PASSWORD, tls: {} }), /certificate/],
  ])('refuses to open with %s, naming the settings and never the password', async (_case, access, reason) => {
    const refused = await openBackend({
      redisClusterNodes: cluster.nodes,
      redisPrefix: uniquePrefix('access'),
      redisClusterAccess: access(),
    }).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(StorageSettingError)
    expect(String(refused)).toMatch(/^StorageSettingError: REDIS_CLUSTER_NODES: no node of the cluster could be used/)
    expect(String(refused)).toMatch(reason)
    expect(String(refused)).not.toContain(PASSWORD)
  })

  it('runs the service from the environment, and a start with a wrong password exits 1 without echoing it', async () => {
    const env = {
      REDIS_CLUSTER_NODES: cluster.nodes,
      REDIS_CLUSTER_PASSWORD: PASSWORD,
      REDIS_CLUSTER_TLS_CA: cluster.caFile!,
      REDIS_PREFIX: uniquePrefix('access-srv'),
      BOOTSTRAP_TOKEN: 'fwp_clusterAccessOwnerToken0123456789abcdefgh',
    }
    const server = await startServer(env)
    try {
      const stored = await fetch(`${server.url}/v1/default/config/main`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${env.BOOTSTRAP_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          ecosystem: 'npm',
          upstreams: [{ id: 'npmjs', endpoint: 'https://registry.npmjs.org' }],
        }),
      })
      expect(stored.status).toBeLessThan(300)
    } finally {
      await server.stop()
    }
    const refused = await startServer({ ...env, REDIS_CLUSTER_PASSWORD: 'wrong-Pa55' }).catch((error: Error) => error)
    expect(String(refused)).toMatch(/server exited early \(1\)/)
    expect(String(refused)).toMatch(/REDIS_CLUSTER_NODES: no node of the cluster could be used \([^)]*WRONGPASS/)
    expect(String(refused)).not.toContain('wrong-Pa55')
  }, 60_000)
})

describe('cluster access settings', () => {
  const read = (path: string) => {
    if (path === '/ca.pem') return 'PEM'
    throw Object.assign(new Error('no such file'), { code: 'ENOENT' })
  }

  it('reads credentials and TLS; a CA file implies TLS', () => {
    expect(clusterAccess({}, read)).toEqual({})
    expect(
      clusterAccess({ REDIS_CLUSTER_USERNAME: 'svc', REDIS_CLUSTER_PASSWORD: 'pw', REDIS_CLUSTER_TLS: 'true' }, read),
    ).toEqual({
      username: 'svc',
      password: 'pw',
      tls: {},
    })
    expect(clusterAccess({ REDIS_CLUSTER_TLS_CA: '/ca.pem' }, read)).toEqual({ tls: { ca: 'PEM' } })
    expect(clusterAccess({ REDIS_CLUSTER_TLS: 'FALSE' }, read)).toEqual({})
  })

  it.each([
    [{ REDIS_CLUSTER_TLS: 'yes' }, /^REDIS_CLUSTER_TLS: expected true or false/],
    [{ REDIS_CLUSTER_TLS_CA: '/missing.pem' }, /^REDIS_CLUSTER_TLS_CA: cannot read \/missing.pem \(ENOENT\)/],
    [{ REDIS_CLUSTER_TLS: 'false', REDIS_CLUSTER_TLS_CA: '/ca.pem' }, /^REDIS_CLUSTER_TLS_CA: a CA is set but/],
  ])('refuses %j, naming the setting', (env, message) => {
    expect(() => clusterAccess(env, read)).toThrow(StorageSettingError)
    expect(() => clusterAccess(env, read)).toThrow(message)
  })
})
