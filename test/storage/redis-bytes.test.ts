import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisConnection } from '../../storage/redis/connection'
import { RedisKeyValue } from '../../storage/redis/key-value'
import { redisUrl, uniquePrefix } from '../support/redis'

/**
 * Bytes on Redis (advisory snapshots, cached packuments and tarballs) are stored as they are: no
 * `base64:` text built and decoded in one go on the event loop. Values written the old way
 * (unstorage's raw form) are still read.
 */
describe('Redis bytes', () => {
  let connection: RedisConnection
  let store: RedisKeyValue
  beforeAll(async () => {
    connection = new RedisConnection(await redisUrl(), uniquePrefix('bytes'))
    store = new RedisKeyValue(connection)
  })
  afterAll(async () => {
    const keys = await connection.client.keys(`${connection.raw('')}*`)
    if (keys.length > 0) await connection.client.del(...keys)
    await connection.close()
  })

  it('stores bytes as they are: the Redis value has their length, not that of base64 text', async () => {
    const bytes = Buffer.alloc(3 * 1024 * 1024 + 1, 0xfe)
    bytes[0] = 0
    await store.setBytes('advisory:snapshot:npm:a', new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length))
    expect(await connection.client.strlen(connection.raw('advisory:snapshot:npm:a'))).toBe(bytes.length)
    expect(Buffer.compare((await store.getBytes('advisory:snapshot:npm:a'))!, bytes)).toBe(0)
    expect(await store.has('advisory:snapshot:npm:a')).toBe(true)
  })

  it("reads bytes unstorage wrote as 'base64:' text before", async () => {
    const bytes = Buffer.from([0, 1, 2, 0xff, 0x7b, 0x22])
    await connection.storage.setItemRaw('registry:tarball:old', bytes)
    const stored = await connection.client.get(connection.raw('registry:tarball:old'))
    expect(stored).toBe(`base64:${bytes.toString('base64')}`)
    expect(Buffer.compare((await store.getBytes('registry:tarball:old'))!, bytes)).toBe(0)
    expect(await store.getBytes('registry:tarball:none')).toBeNull()
  })
})
