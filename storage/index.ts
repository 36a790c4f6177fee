import { createStorage } from 'unstorage'
import { atomicFsDriver } from './atomic-fs-driver'
import { LocalBackend } from './local-backend'
import { RedisBackend } from './redis-backend'
import type { Backend } from './backend'

export * from './backend'
export { LocalBackend } from './local-backend'
export { RedisBackend } from './redis-backend'

export interface BackendOptions {
  redisUrl?: string
  redisPrefix?: string
  dataDir?: string
}

/** Chooses the driver at run time: Redis when `REDIS_URL` is set, else the fs driver. */
export function createBackend(options: BackendOptions = backendOptionsFromEnv()): Backend {
  if (options.redisUrl) return new RedisBackend(options.redisUrl, options.redisPrefix ?? 'pf')
  return new LocalBackend(createStorage({ driver: atomicFsDriver({ base: options.dataDir ?? './.data' }) }))
}

export function backendOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): BackendOptions {
  return {
    redisUrl: env.REDIS_URL || undefined,
    redisPrefix: env.REDIS_PREFIX || 'pf',
    dataDir: env.DATA_DIR || './.data',
  }
}
