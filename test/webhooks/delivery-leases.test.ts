import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createStorage } from 'unstorage'
import { LocalBackend } from '../../storage'
import { LeaseRepository } from '../../storage/repositories/leases'
import { DeliveryLeases } from '../../server/webhooks/delivery/delivery-leases'

// One clock for both sides: the in-memory backend judges lease expiry on Date.now, which is faked
// here, and each process's lease keeper is given the same clock.
const LEASE = 1_000
const ATTEMPT = 4_000
const REF = 'acme/wh_1'

describe('DeliveryLeases (the delivery lease of one webhook in two processes)', () => {
  let a: DeliveryLeases
  let b: DeliveryLeases
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.UTC(2026, 10, 26, 12))
    const leases = new LeaseRepository(new LocalBackend(createStorage()))
    const keeper = (owner: string) =>
      new DeliveryLeases({
        owner,
        leaseTtlMs: LEASE,
        attemptTimeoutMs: ATTEMPT,
        lease: () => leases.webhook('acme', 'wh_1'),
        now: () => Date.now(),
      })
    a = keeper('a')
    b = keeper('b')
  })
  afterEach(() => {
    vi.useRealTimers()
  })
  const advance = (ms: number) => vi.setSystemTime(Date.now() + ms)

  it('an attempt extends the lease to its timeout plus one lease time, and renewals meanwhile keep that', async () => {
    expect(await a.acquire(REF)).toBe(true)
    expect(await a.beginAttempt(REF)).toBe(ATTEMPT)
    advance(500)
    expect(await a.acquire(REF)).toBe(true) // a renewal during the attempt
    advance(2_500) // 3 s in: a lease of its normal time would have lapsed twice over
    expect(await b.acquire(REF)).toBe(false)
    advance(1_900) // 4.9 s: the request was cut at 4 s, one lease time of grace remains
    expect(await b.acquire(REF)).toBe(false)
    advance(200) // 5.1 s
    expect(await b.acquire(REF)).toBe(true)
  })

  it('the end of an attempt returns the lease to its normal time at once (quick takeover after a kill)', async () => {
    expect(await a.acquire(REF)).toBe(true)
    expect(await a.beginAttempt(REF)).toBe(ATTEMPT)
    advance(300)
    await a.endAttempt(REF)
    advance(LEASE - 1)
    expect(await b.acquire(REF)).toBe(false)
    advance(2)
    expect(await b.acquire(REF)).toBe(true)
  })

  it('an extension sent ahead of its request covers it only while recent, and the request is cut where it ends', async () => {
    expect(await a.acquire(REF)).toBe(true)
    expect(a.attemptLeft(REF, 100)).toBeNull() // no attempt begun
    expect(await a.beginAttempt(REF)).toBe(ATTEMPT)
    advance(60)
    expect(a.attemptLeft(REF, 100)).toBe(ATTEMPT - 60)
    advance(60)
    expect(a.attemptLeft(REF, 100)).toBeNull() // sent 120 ms ago: the attempt extends afresh
    expect(await a.beginAttempt(REF)).toBe(ATTEMPT)
    await a.endAttempt(REF)
    expect(a.attemptLeft(REF, 100)).toBeNull() // ended: nothing to send under
    expect(await a.beginAttempt(REF)).toBe(ATTEMPT)
    advance(LEASE + ATTEMPT)
    expect(a.attemptLeft(REF, Infinity)).toBeNull() // lapsed: lost
  })

  it('a lease that lapsed here is lost: no attempt, no silent renewal, even when nobody took it', async () => {
    expect(await a.acquire(REF)).toBe(true)
    advance(LEASE) // a stall: no renewal within the lease time
    expect(a.holds(REF)).toBe(false)
    expect(await a.renew(REF)).toBe(false) // the renewal of the actor running here: lost
    expect(await a.beginAttempt(REF)).toBeNull()
    // Adopted afresh (as a new owner would, from the stored snapshot), it is held again.
    expect(await a.acquire(REF)).toBe(true)
    expect(a.holds(REF)).toBe(true)
  })

  it('an owner whose lease another process took sends nothing', async () => {
    expect(await a.acquire(REF)).toBe(true)
    advance(LEASE + 1)
    expect(await b.acquire(REF)).toBe(true)
    expect(await a.beginAttempt(REF)).toBeNull()
    expect(await b.beginAttempt(REF)).toBe(ATTEMPT)
  })

  it('lease time counts from when a renewal was sent; a request is cut where its extension ends', async () => {
    // Storage answers after `delay` ms (a stall while waiting for it).
    const repository = new LeaseRepository(new LocalBackend(createStorage()))
    let delay = 0
    const slow = new DeliveryLeases({
      owner: 'slow',
      leaseTtlMs: LEASE,
      attemptTimeoutMs: ATTEMPT,
      lease: () => {
        const inner = repository.webhook('acme', 'wh_2')
        return {
          ...inner,
          acquire: async (owner, ttl) => {
            const held = await inner.acquire(owner, ttl)
            advance(delay)
            return held
          },
        }
      },
      now: () => Date.now(),
    })
    delay = 600
    expect(await slow.acquire(REF)).toBe(true)
    expect(slow.holds(REF)).toBe(true)
    // The extension comes back 1.5 s after it was sent: the request gets the 2.5 s left of its 4 s.
    delay = 1_500
    expect(await slow.beginAttempt(REF)).toBe(ATTEMPT - 1_500)
    delay = 0
    await slow.endAttempt(REF)
    delay = 1_500
    // A renewal answered after more than the lease time: not surely held any more.
    expect(await slow.renew(REF)).toBe(true)
    expect(slow.holds(REF)).toBe(false)
    expect(await slow.beginAttempt(REF)).toBeNull()
  })
})
