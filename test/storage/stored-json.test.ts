import { destr } from 'destr'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Backend, LocalBackend, RedisBackend } from '../../storage'
import { SMALL } from '../../storage/cooperative-json'
import { parseStoredJson, readStoredText } from '../../storage/stored-json'
import { BACKEND_KINDS, makeBackend } from '../support/backends'
import { CountingSlice } from '../support/counting-slice'

/**
 * Stored values of up to 1 MiB (a firewall of 47,500 principals, its history entry, its event) are
 * read back in turns (CONTRACT.md 8), with what unstorage's `getItem` (destr) or `JSON.parse` gave.
 */

/** A firewall just under 1 MiB: 47,500 principals, plus whatever `extra` adds. */
function firewall(extra: Record<string, unknown> = {}) {
  return {
    id: 'big',
    version: 3,
    permissions: Object.fromEntries(Array.from({ length: 47_500 }, (_, i) => [`u${i}`, ['fw:read']])),
    rules: Array.from({ length: 500 }, (_, i) => ({ id: `r${i}`, selector: { function: { name: 'deprecated' } } })),
    ...extra,
  }
}

describe('readStoredText: what destr (unstorage getItem) gives, in turns', () => {
  it('parses a 1 MiB document in many turns, the value destr gives', async () => {
    const text = JSON.stringify(firewall())
    expect(text.length).toBeGreaterThan(3 * SMALL)
    const slice = new CountingSlice()
    expect(await readStoredText(text, slice)).toEqual(destr(text))
    expect(slice.pauses).toBeGreaterThan(10)
  })

  it('leaves out prototype keys as destr does, and says so; keeps a `constructor` principal', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
    try {
      const doc = firewall(JSON.parse('{"constructor":{"prototype":{"polluted":true}}}'))
      Object.defineProperty(doc.permissions, 'constructor', { value: ['fw:read'], enumerable: true })
      // `__proto__` at the top, in a large record and in a small one: destr drops each.
      const text = JSON.stringify(doc)
        .replace('{"id"', '{"__proto__":{"polluted":true},"id"')
        .replace('"u0":', '"__proto__":["fw:admin"],"u0":')
        .replace('"selector":{', '"selector":{"__proto__":{"polluted":true},')
      const expected = destr(text) as ReturnType<typeof firewall>
      const warned = warn.mock.calls.length
      const parsed = (await readStoredText(text, new CountingSlice())) as ReturnType<typeof firewall>
      expect(parsed).toEqual(expected)
      expect(Object.hasOwn(parsed, '__proto__')).toBe(false)
      expect(Object.hasOwn(parsed, 'constructor')).toBe(false)
      expect(Object.hasOwn(parsed.permissions, '__proto__')).toBe(false)
      expect(parsed.permissions.constructor).toEqual(['fw:read'])
      expect(Object.hasOwn(parsed.rules[0].selector, '__proto__')).toBe(false)
      expect(({} as { polluted?: boolean }).polluted).toBeUndefined()
      expect(warn.mock.calls.length - warned).toBe(warned)
    } finally {
      warn.mockRestore()
    }
  })

  it('answers what destr answers for large text that is not a JSON document', async () => {
    const body = JSON.stringify(firewall())
    for (const text of [
      body.slice(0, -1), // cut short: destr answers the text
      `\ufeff${body}`, // a byte order mark: JSON.parse refuses it, destr answers the text
      `"${'x'.repeat(SMALL)}"`, // a long string
      'y'.repeat(SMALL + 1), // plain text
      `[${'1'.repeat(SMALL)}]`, // a bare number the cooperative parser does not take apart
    ])
      expect(await readStoredText(text)).toEqual(destr(text))
  })

  it('answers small text as destr does', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
    try {
      for (const text of ['true', '12', 'null', 'plain', '"quoted"', '{"a":1}', '[1,2]', '{"__proto__":{"x":1}}'])
        expect(await readStoredText(text)).toEqual(destr(text))
    } finally {
      warn.mockRestore()
    }
  })
})

describe('parseStoredJson: what JSON.parse gives, in turns', () => {
  it('parses a large document in turns, and throws the SyntaxError JSON.parse throws', async () => {
    const text = JSON.stringify(firewall())
    const slice = new CountingSlice()
    expect(await parseStoredJson(text, slice)).toEqual(JSON.parse(text))
    expect(slice.pauses).toBeGreaterThan(10)
    const broken = text.slice(0, -1)
    await expect(parseStoredJson(broken)).rejects.toThrow(SyntaxError)
    const bare = `[${'1'.repeat(SMALL)}]`
    expect(await parseStoredJson(bare)).toEqual(JSON.parse(bare))
  })
})

describe.each(BACKEND_KINDS)('a 1 MiB document stored and read back (%s)', (kind) => {
  let backend: Backend
  beforeAll(async () => {
    backend = await makeBackend(kind)
  })
  afterAll(async () => {
    await backend?.close()
  })

  it('reads back what unstorage reads, by get, getMany and a transaction; writes the text JSON.stringify writes', async () => {
    const doc = firewall({ description: 'é "quoted" \\ \u0001' })
    await backend.keyValue.transact(['{big}:a'], () => ({
      writes: { set: { '{big}:a': doc, '{big}:b': doc } },
      result: 1,
    }))
    const { storage } = backend as LocalBackend | RedisBackend
    const stored = await storage.getItemRaw('{big}:a')
    expect(Buffer.isBuffer(stored) ? stored.toString('utf8') : stored).toBe(JSON.stringify(doc))
    expect(await backend.keyValue.get('{big}:a')).toEqual(await storage.getItem('{big}:a'))
    expect(await backend.keyValue.get('{big}:a')).toEqual(doc)
    expect(await backend.keyValue.getMany(['{big}:a', '{big}:absent', '{big}:b'])).toEqual([doc, null, doc])
    const seen = await backend.keyValue.transact(['{big}:b'], (values) => ({
      writes: {},
      result: values.get('{big}:b'),
    }))
    expect(seen).toEqual(doc)
  }, 60_000)
})
