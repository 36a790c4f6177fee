import { describe, expect, it } from 'vitest'
import {
  parseJsonCooperatively,
  SMALL,
  stringifyCooperatively,
  TooManyMembers,
} from '../../server/common/cooperative-json'
import { sortCooperatively } from '../../server/common/cooperative-sort'
import { decodeCooperatively, joinCooperatively } from '../../server/common/cooperative-bytes'
import { CountingSlice } from '../support/counting-slice'

/** A packument-like document of `versions` versions, with escapes, non-ASCII and a long readme. */
function document(versions: number): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    name: 'big',
    readme: 'r\u00e9\ud83d\ude00"\\\n\u0001'.repeat(60_000),
    versions: {},
    list: Array.from({ length: 30_000 }, (_, i) => (i % 3 === 0 ? null : i % 3 === 1 ? i * 1.5 : `é${i}`)),
  }
  const all = doc.versions as Record<string, unknown>
  for (let i = 0; i < versions; i++)
    all[`1.0.${i}`] = { version: `1.0.${i}`, description: 'x'.repeat(200), deps: { a: '^1' }, ok: i % 2 === 0 }
  Object.defineProperty(all, '__proto__', {
    value: { polluted: true },
    enumerable: true,
    configurable: true,
    writable: true,
  })
  return doc
}

describe('parseJsonCooperatively', () => {
  it('parses a million tiny members in batches', async () => {
    const text = `{"a":[${'1,'.repeat(1_000_000)}1],"b":{${Array.from({ length: 100_000 }, (_, i) => `"k${i}":${i}`).join(',')}}}`
    const parsed = (await parseJsonCooperatively(text)) as { a: number[]; b: Record<string, number> }
    expect([parsed.a.length, Object.keys(parsed.b).length, parsed.b.k99999]).toEqual([1_000_001, 100_000, 99_999])
  })

  it('gives what JSON.parse gives for a large document, __proto__ kept as a key, in many turns', async () => {
    const text = JSON.stringify(document(5_000))
    expect(text.length).toBeGreaterThan(4 * SMALL)
    const slice = new CountingSlice()
    const parsed = await parseJsonCooperatively(text, slice)
    expect(parsed).toEqual(JSON.parse(text))
    expect(JSON.stringify(parsed)).toBe(text)
    expect(Object.hasOwn((parsed as { versions: object }).versions, '__proto__')).toBe(true)
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined()
    // Runs of small members go to JSON.parse together, a turn about every SMALL characters.
    expect(slice.pauses).toBeGreaterThanOrEqual(Math.floor(text.length / SMALL))
  })

  it('decodes a long string in pieces that never split an escape', async () => {
    for (const unit of ['\\u00e9', '\\\\', '\\"', 'a\\ud83d\\ude00', 'plain']) {
      const text = `"${unit.repeat(Math.ceil((SMALL * 3) / unit.length))}"`
      expect(await parseJsonCooperatively(text)).toBe(JSON.parse(text))
    }
  })

  it('throws a SyntaxError where JSON.parse does', async () => {
    const pad = ' '.repeat(SMALL)
    const bad = [
      `{"a":1,}${pad}`,
      `[${'1,'.repeat(SMALL)}]`,
      `{"a" 1${pad}}`,
      `"${'a'.repeat(SMALL)}\u0001"`,
      `{"a":1}${pad}x`,
      `[${'"\\x",'.repeat(SMALL / 4)}1]`,
      `{"a":[${'1,'.repeat(SMALL)}2}`,
      `[${'['.repeat(SMALL)}`,
      `${'1'.repeat(SMALL)}x`,
    ]
    for (const text of bad) {
      expect(() => JSON.parse(text)).toThrow(SyntaxError)
      await expect(parseJsonCooperatively(text)).rejects.toThrow(SyntaxError)
    }
  })

  it('refuses large containers nested past 100 levels (no document served is; each level costs a scan)', async () => {
    const deep = `${'['.repeat(101)}${'0,'.repeat(SMALL)}0${']'.repeat(101)}`
    expect(JSON.parse(deep)).toHaveLength(1)
    await expect(parseJsonCooperatively(deep)).rejects.toThrow(SyntaxError)
  })

  it('refuses a number or other bare value of SMALL characters or more (JSON.parse would read the number)', async () => {
    await expect(parseJsonCooperatively(`[${'1'.repeat(SMALL)}]`)).rejects.toThrow(/is not a string/)
  })

  describe('with maxMembers (upstream answers: one key listing of a huge record cannot take turns)', () => {
    const versions = (count: number) =>
      JSON.stringify({
        name: 'many',
        versions: Object.fromEntries(Array.from({ length: count }, (_, i) => [`1.0.${i}`, {}])),
      })
    const items = (count: number) => JSON.stringify({ files: Array.from({ length: count }, (_, i) => ({ n: i })) })

    it('parses an object and an array of exactly maxMembers members as JSON.parse does', async () => {
      for (const text of [versions(60_000), items(60_000)]) {
        expect(text.length).toBeGreaterThan(SMALL)
        expect(await parseJsonCooperatively(text, undefined, { maxMembers: 60_000 })).toEqual(JSON.parse(text))
      }
    })

    it('throws TooManyMembers for one member more, in runs of small members or members parsed alone', async () => {
      const big = `{"big":"${'x'.repeat(SMALL)}"}`
      const aloneObject = `{"versions":{"a":${big},"b":${big},"c":${big}}}`
      const aloneArray = `{"files":[${big},${big},${big}]}`
      for (const [text, limit] of [
        [versions(60_001), 60_000],
        [items(60_001), 60_000],
        [aloneObject, 2],
        [aloneArray, 2],
      ] as const) {
        const refused = await parseJsonCooperatively(text, undefined, { maxMembers: limit }).catch((error) => error)
        expect(refused).toBeInstanceOf(TooManyMembers)
        expect((refused as TooManyMembers).limit).toBe(limit)
      }
      // Without the option nothing is counted.
      expect(await parseJsonCooperatively(aloneArray)).toEqual(JSON.parse(aloneArray))
    })
  })
})

/** `text` cut into pieces of the sizes in `sizes`, over and over (1-character pieces included). */
function cut(text: string, sizes: readonly number[]): string[] {
  const pieces: string[] = []
  for (let at = 0, i = 0; at < text.length; i++) {
    const size = sizes[i % sizes.length]
    pieces.push(text.slice(at, at + size))
    at += size
  }
  return pieces
}

describe('parseJsonCooperatively over pieces (a decoded upstream answer, never joined)', () => {
  // Odd sizes, so pieces end inside keys, escapes, surrogate pairs, numbers and literals; empty ones too.
  const sizes = [1, 0, 7, 65_537, 3, 0, 131_071, 2, 1]

  it('gives what JSON.parse of the pieces joined gives, __proto__ kept as a key', async () => {
    const text = JSON.stringify(document(5_000))
    const pieces = cut(text, sizes)
    expect(pieces.length).toBeGreaterThan(100)
    const parsed = await parseJsonCooperatively(pieces, new CountingSlice())
    expect(JSON.stringify(parsed)).toBe(text)
    expect(Object.hasOwn((parsed as { versions: object }).versions, '__proto__')).toBe(true)
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined()
  })

  it('decodes long strings whose escapes are cut between pieces', async () => {
    for (const unit of ['\\u00e9', '\\\\', '\\"', 'a\\ud83d\\ude00']) {
      const text = `{"readme":"${unit.repeat(Math.ceil((SMALL * 2) / unit.length))}","n":[1,true,null]}`
      expect(await parseJsonCooperatively(cut(text, sizes))).toEqual(JSON.parse(text))
    }
  })

  it('parses small text in pieces, and throws a SyntaxError where JSON.parse does', async () => {
    expect(await parseJsonCooperatively(['{"a"', ':[1,', '2]}'])).toEqual({ a: [1, 2] })
    const pad = ' '.repeat(SMALL)
    const bad = [
      `{"a":1,}${pad}`,
      `{"a" 1${pad}}`,
      `"${'a'.repeat(SMALL)}\u0001"`,
      `{"a":1}${pad}x`,
      `{"a":[${'1,'.repeat(SMALL)}2}`,
      `[${'['.repeat(SMALL)}`,
      `{"a":"${'x'.repeat(SMALL)}`,
      `{"a":tru${pad}e}`,
    ]
    for (const text of bad) {
      expect(() => JSON.parse(text)).toThrow(SyntaxError)
      await expect(parseJsonCooperatively(cut(text, sizes)), text.slice(0, 20)).rejects.toThrow(SyntaxError)
    }
  })
})

describe('stringifyCooperatively', () => {
  it('writes exactly JSON.stringify, in pieces, with their UTF-8 size', async () => {
    const doc = { ...document(5_000), skipped: undefined, inArray: [undefined, () => 1, 1] }
    const slice = new CountingSlice()
    const { pieces, bytes } = await stringifyCooperatively(doc, slice)
    const text = JSON.stringify(doc)
    expect(pieces.join('')).toBe(text)
    expect(bytes).toBe(Buffer.byteLength(text))
    expect(pieces.length).toBeGreaterThan(2)
    expect(slice.pauses).toBeGreaterThanOrEqual(Math.floor(text.length / SMALL))
  })

  it('keeps surrogate pairs of a long string whole', async () => {
    const text = 'a' + '\ud83d\ude00'.repeat(SMALL)
    expect((await stringifyCooperatively(text)).pieces.join('')).toBe(JSON.stringify(text))
  })

  it('writes a small value in one piece', async () => {
    expect(await stringifyCooperatively({ a: [1, 'b'] })).toEqual({ pieces: ['{"a":[1,"b"]}'], bytes: 13 })
  })
})

describe('sortCooperatively and the byte helpers', () => {
  it('sorts stably, as Array.prototype.sort', async () => {
    const items = Array.from({ length: 5_000 }, (_, i) => ({ key: (i * 7919) % 100, i }))
    const byKey = (a: { key: number }, b: { key: number }) => a.key - b.key
    expect(await sortCooperatively(items, byKey, new CountingSlice())).toEqual([...items].sort(byKey))
  })

  it('joins text and bytes, and decodes across piece bounds', async () => {
    const text = 'é😀'.repeat(600_000)
    const joined = await joinCooperatively(['{"a":"', Buffer.from(text), '"}'])
    expect(joined.toString()).toBe(`{"a":"${text}"}`)
    expect((await decodeCooperatively(Buffer.from(`\ufeff${text}`))).join('')).toBe(text)
  })
})
