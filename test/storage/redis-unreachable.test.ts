import { describe, expect, it } from 'vitest'
import { RedisBackend } from '../../storage/redis-backend'
import { isStorageFailure } from '../../storage/storage-failure'
import { toProblem } from '../../server/http/problem'
import { privateRedis } from '../support/redis'

describe('a Redis that stops answering (CONTRACT section 8, storage errors)', () => {
  it('fails reads as errors that the edge answers 503 storage_unavailable, never 500', async () => {
    const redis = await privateRedis()
    const backend = new RedisBackend(redis.url, 'unreachable')
    try {
      await backend.keyValue.set('doc', { id: 'd' })
      await expect(backend.keyValue.get('doc')).resolves.toEqual({ id: 'd' })
      await redis.stop()
      const failure = await backend.keyValue.get('doc').then(
        () => null,
        (error: unknown) => error,
      )
      expect(failure).toBeInstanceOf(Error)
      expect(isStorageFailure(failure)).toBe(true)
      const { problem, headers } = toProblem(failure)
      expect(problem).toMatchObject({ status: 503, code: 'storage_unavailable' })
      expect(Number(headers['retry-after'])).toBeGreaterThan(0)
    } finally {
      await backend.close().catch(() => undefined)
    }
  })

  it('does not take an ordinary error for a storage failure', () => {
    expect(isStorageFailure(new Error('boom'))).toBe(false)
    expect(isStorageFailure('Connection is closed.')).toBe(false)
    expect(toProblem(new Error('boom')).problem.status).toBe(500)
  })
})
