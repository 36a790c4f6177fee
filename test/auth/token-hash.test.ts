import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { generateToken, hashToken } from '../../server/auth/tokens'

describe('hashToken', () => {
  it('is the hex SHA-256 of the material, the form tokens are stored under', () => {
    for (const material of [generateToken('personal'), generateToken('service'), 'bootstrap-token-ÄÖ', 'x'.repeat(512)])
      expect(hashToken(material)).toBe(createHash('sha256').update(material).digest('hex'))
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })
})
