import { describe, expect, it } from 'vitest'
import { noteCheckedFirewall, takeCheckedFirewall } from '../../server/firewall/call-read'
import { emptyFirewall } from '../support/documents'

describe('the firewall a call’s access check read', () => {
  it('is handed once to the same call, never to another', () => {
    const call = {}
    const firewall = emptyFirewall('web')
    noteCheckedFirewall(call, 'web', firewall)
    expect(takeCheckedFirewall({}, 'web')).toBeUndefined()
    expect(takeCheckedFirewall(call, 'other')).toBeUndefined()
    expect(takeCheckedFirewall(call, 'web')).toBe(firewall)
    // A later read in the call goes to storage again.
    expect(takeCheckedFirewall(call, 'web')).toBeUndefined()
  })

  it('hands over a firewall the check found missing as null', () => {
    const call = {}
    noteCheckedFirewall(call, 'gone', null)
    expect(takeCheckedFirewall(call, 'gone')).toBeNull()
  })
})
