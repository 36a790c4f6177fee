import type { Cluster, Redis } from 'ioredis'
import { createBackend, type Backend, type RedisBackend } from '../../storage'
import { redisUrl, uniquePrefix } from '../../test/support/redis'
import { startRedisCluster } from '../../test/support/redis-cluster'

/** Where the service keeps its data: env for the server, and a backend and raw client for this process. */
export interface BenchTarget {
  label: string
  /** Starts what the target needs (a cluster is started here, not before its turn). */
  open(): Promise<OpenTarget>
}

export interface OpenTarget {
  env: Record<string, string>
  backend: () => Promise<Backend>
  /** Raw client to run a command on `key` with (MEMORY USAGE): on a cluster, the node holding it. */
  redis: (backend: Backend, key: string) => Promise<Redis>
  prefix: string
  /** The same target under a fresh key prefix: a phase that starts from empty storage. */
  fresh: () => { env: Record<string, string>; backend: () => Promise<Backend> }
  close?: () => Promise<void>
}

/** The targets named (`single`, `cluster`), side by side: one Redis, and a 3-master Redis Cluster on loopback. */
export async function benchTargets(names: string[]): Promise<BenchTarget[]> {
  const single: BenchTarget = {
    label: 'single Redis',
    async open() {
      const url = await redisUrl()
      const prefix = uniquePrefix('bench-wh')
      return {
        env: { REDIS_URL: url, REDIS_PREFIX: prefix },
        backend: () => createBackend({ redisUrl: url, redisPrefix: prefix }),
        redis: async (backend) => (backend as RedisBackend).redis as Redis,
        prefix,
        fresh: () => {
          const other = uniquePrefix('bench-wh')
          return {
            env: { REDIS_URL: url, REDIS_PREFIX: other },
            backend: () => createBackend({ redisUrl: url, redisPrefix: other }),
          }
        },
      }
    },
  }
  const cluster: BenchTarget = {
    label: 'Redis Cluster, 3 masters',
    async open() {
      const started = await startRedisCluster(3)
      const prefix = uniquePrefix('bench-wh')
      return {
        env: { REDIS_CLUSTER_NODES: started.nodes, REDIS_PREFIX: prefix },
        backend: () => createBackend({ redisClusterNodes: started.nodes, redisPrefix: prefix }),
        redis: (backend, key) => nodeHolding((backend as RedisBackend).redis as Cluster, key),
        prefix,
        fresh: () => {
          const other = uniquePrefix('bench-wh')
          return {
            env: { REDIS_CLUSTER_NODES: started.nodes, REDIS_PREFIX: other },
            backend: () => createBackend({ redisClusterNodes: started.nodes, redisPrefix: other }),
          }
        },
        close: () => started.stop(),
      }
    },
  }
  return [single, cluster].filter((target) => names.includes(target === single ? 'single' : 'cluster'))
}

/** The master serving `key`'s slot: MEMORY USAGE is answered only there. */
async function nodeHolding(cluster: Cluster, key: string): Promise<Redis> {
  const slot = Number(await cluster.cluster('KEYSLOT', key))
  const [address] = cluster.slots[slot] ?? []
  const node = cluster
    .nodes('master')
    .find((candidate) => `${candidate.options.host}:${candidate.options.port}` === address)
  if (!node) throw new Error(`no master holds slot ${slot}`)
  return node
}
