import { describe, expect, it } from 'vitest'
import { TouchGate } from '../../server/auth/touch-gate'

describe('token last-use gate (#30)', () => {
  it('writes a token at most once per interval', () => {
    const gate = new TouchGate(60_000)
    expect(gate.due('tok-1', 0)).toBe(true)
    expect(gate.due('tok-1', 59_999)).toBe(false)
    expect(gate.due('tok-1', 60_000)).toBe(true)
  })

  it('remembers at most its bound of tokens, however many are used', () => {
    const gate = new TouchGate(60_000, 100)
    for (let i = 0; i < 1_000; i++) expect(gate.due(`tok-${i}`, 1_000)).toBe(true)
    expect(gate.size).toBe(100)
    // The most recent ones are remembered; a dropped one only costs an early write.
    expect(gate.due('tok-999', 2_000)).toBe(false)
    expect(gate.due('tok-0', 2_000)).toBe(true)
  })
})
