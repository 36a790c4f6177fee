import { describe, expect, it } from 'vitest'
import { mapOf, own, ownRecord, recordOf } from '../../server/common/own'

const BUILT_INS = ['constructor', '__proto__', 'valueOf', 'toString', 'hasOwnProperty']

describe('own-property reads of id-keyed JSON objects', () => {
  const parsed = JSON.parse('{"alice": 1, "__proto__": 2, "constructor": 3}') as Record<string, number>

  it('own() sees own keys only', () => {
    expect(own({ alice: 1 }, 'alice')).toBe(1)
    for (const key of BUILT_INS) expect(own({ alice: 1 }, key), key).toBeUndefined()
    expect(own(parsed, '__proto__')).toBe(2)
    expect(own(parsed, 'constructor')).toBe(3)
    expect(own(null, 'alice')).toBeUndefined()
  })

  it('mapOf() keeps every own key, `__proto__` included, and nothing inherited', () => {
    expect([...mapOf<number>(parsed)]).toEqual([
      ['alice', 1],
      ['__proto__', 2],
      ['constructor', 3],
    ])
    expect(mapOf({}).get('toString')).toBeUndefined()
    for (const junk of [null, undefined, 'text', 7, [1, 2]]) expect(mapOf(junk).size).toBe(0)
  })

  it('recordOf() writes every key as an own property, so JSON keeps it', () => {
    const record = recordOf(
      new Map([
        ['__proto__', 1],
        ['valueOf', 2],
      ]),
    )
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype)
    expect(JSON.stringify(record)).toBe('{"__proto__":1,"valueOf":2}')
  })

  it('ownRecord() copies into an object without a prototype', () => {
    const record = ownRecord<number>(parsed)
    expect(Object.getPrototypeOf(record)).toBeNull()
    expect(record.__proto__).toBe(2)
    expect(record.toString).toBeUndefined()
    expect('valueOf' in record).toBe(false)
    expect(JSON.stringify(record)).toBe('{"alice":1,"__proto__":2,"constructor":3}')
  })
})
