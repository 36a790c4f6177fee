import { describe, expect, it } from 'vitest'
import { createBackend, StorageSettingError } from '../../storage'
import { assertOneSlot, CrossSlotError, hashTagOf, parseClusterNodes } from '../../storage/redis-target'

describe('REDIS_CLUSTER_NODES', () => {
  it('reads host:port lists, IPv6 in brackets, spaces around commas', () => {
    expect(parseClusterNodes('10.0.0.1:7000, redis-b.internal:7001,[::1]:7002')).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: 'redis-b.internal', port: 7001 },
      { host: '::1', port: 7002 },
    ])
  })

  it.each(['', ',', 'host', 'host:', 'host:0', 'host:70000', 'redis://host:7000', 'a:1;b:2'])(
    'refuses %j, naming the setting',
    (value) => {
      expect(() => parseClusterNodes(value)).toThrow(StorageSettingError)
      expect(() => parseClusterNodes(value)).toThrow(/^REDIS_CLUSTER_NODES: /)
    },
  )

  it.each([':hunter2@10.0.0.1:7000', 'admin:hunter2@10.0.0.1:7000', '10.0.0.1:7000,redis://:hunter2@b:7001'])(
    'never echoes a malformed entry (it may hold a password): %j',
    (value) => {
      let message = ''
      try {
        parseClusterNodes(value)
      } catch (error) {
        message = (error as Error).message
      }
      expect(message).toMatch(/^REDIS_CLUSTER_NODES: entry \d of \d is not host:port \(expected host:port,/)
      expect(message).toContain('REDIS_CLUSTER_PASSWORD')
      expect(message).not.toContain('hunter2')
    },
  )

  it('is refused together with REDIS_URL, and with braces in REDIS_PREFIX', async () => {
    await expect(
      createBackend({ redisUrl: 'redis://127.0.0.1:6379', redisClusterNodes: '127.0.0.1:7000' }),
    ).rejects.toThrow(/REDIS_CLUSTER_NODES: set either REDIS_URL/)
    await expect(createBackend({ redisClusterNodes: '127.0.0.1:7000', redisPrefix: '{pf}' })).rejects.toThrow(
      /^REDIS_PREFIX: /,
    )
  })
})

describe('hash tags', () => {
  it('follow Redis: the first non-empty {...}, else the whole key', () => {
    expect(hashTagOf('pf:ns:{acme}:fw:x')).toBe('acme')
    expect(hashTagOf('pf:log:ns:{acme}:audit')).toBe('acme')
    expect(hashTagOf('pf:token:abc')).toBe('pf:token:abc')
    expect(hashTagOf('pf:{}:x{y}')).toBe('pf:{}:x{y}')
    expect(hashTagOf('refusals:{a}b}:gate')).toBe('a')
  })

  it('one atomic operation may span keys of one tag only', () => {
    expect(() => assertOneSlot(['pf:ns:{a}:x', 'pf:log:ns:{a}:audit'])).not.toThrow()
    expect(() => assertOneSlot(['pf:ns:{a}:x', 'pf:ns:{b}:x'])).toThrow(CrossSlotError)
    expect(() => assertOneSlot(['pf:ns:{a}:x', 'pf:wh-all'])).toThrow(CrossSlotError)
  })
})
