import { privateRedis } from './redis'

let stop: (() => Promise<void>) | null = null

/**
 * vitest globalSetup: Redis suites use REDIS_URL when set; otherwise one private
 * redis-server is started here (in the main process, so it is stopped for sure at the end)
 * and its URL handed to every test worker through the environment.
 */
export async function setup(): Promise<void> {
  if (process.env.REDIS_URL) return
  const redis = await privateRedis()
  stop = redis.stop
  process.env.REDIS_URL = redis.url
}

export async function teardown(): Promise<void> {
  await stop?.()
}
