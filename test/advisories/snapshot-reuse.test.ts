import { gunzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { PackedIndexBuilder, type PackedAdvisoryIndex } from '../../server/advisories/packed-index'
import { decodeSnapshot, encodeSnapshot, SnapshotError } from '../../server/advisories/snapshot'
import { encodeSnapshotReusing, type ReusingSnapshot } from '../../server/advisories/snapshot-blocks'
import { followSnapshot } from '../../server/advisories/snapshot-follow'
import type { Advisory } from '../../server/advisories/types'

/** Small blocks, so a few thousand records make dozens of them. */
const BLOCK = 8 * 1024

/** A small synthetic malicious-package report (about 190 bytes as a line). */
function report(n: number, summary = `Malicious code in pkg-${n} (npm)`): Advisory {
  return {
    id: `MAL-2025-${n}`,
    aliases: [],
    summary,
    malware: true,
    affected: [{ ecosystem: 'npm', name: `pkg-${n}`, ranges: [], versions: [`1.0.${n % 10}`, `1.1.${n % 7}`] }],
  }
}

function indexOf(advisories: Advisory[]): PackedAdvisoryIndex {
  const builder = new PackedIndexBuilder()
  for (const advisory of advisories) builder.add(advisory)
  return builder.finish()
}

/** Per advisory of `next`: its position in `before` plus 1 when it is the same record, else 0 (feed-load's origins). */
function originsOf(before: Advisory[], next: Advisory[]): Uint32Array {
  const position = new Map(before.map((advisory, i) => [advisory, i]))
  return Uint32Array.from(next, (advisory) => (position.get(advisory) ?? -1) + 1)
}

/** The records' text: the header line lists the blocks, which differ from one layout to another. */
const text = (bytes: Uint8Array) => {
  const all = gunzipSync(bytes)
  return all.subarray(all.indexOf(0x0a) + 1)
}
const linesOf = (index: PackedAdvisoryIndex) => Array.from(index.lines(), (line) => Buffer.from(line).toString())
const blocksOf = (snapshot: ReusingSnapshot) => snapshot.memory.recordEnd.length

/** The fewest bytes of text a block of the snapshot holds. */
function smallestBlock({ memory }: ReusingSnapshot, index: PackedAdvisoryIndex): number {
  const lengths = Array.from(index.lines(), (line) => line.length + 1)
  let smallest = Infinity
  memory.recordEnd.reduce((start, end) => {
    smallest = Math.min(
      smallest,
      lengths.slice(start, end).reduce((sum, length) => sum + length, 0),
    )
    return end
  }, 0)
  return smallest
}

const first = Array.from({ length: 3000 }, (_, n) => report(n))

/** The refreshed feed: one record added in the middle, one removed, one changed, five appended. */
function refreshed(): Advisory[] {
  const next = [...first]
  next[1500] = report(1500, 'Malicious code in pkg-1500, now with a longer summary')
  next.splice(2000, 1)
  next.splice(1000, 0, report(9000))
  for (let n = 9001; n <= 9005; n++) next.push(report(n))
  return next
}

/** The refreshed feed's index, and its snapshot encoded reusing `before`'s blocks. */
async function encodeRefreshed(before: ReusingSnapshot) {
  const next = refreshed()
  const index = indexOf(next)
  const after = await encodeSnapshotReusing(index, {
    previous: before.memory,
    origins: originsOf(first, next),
    blockBytes: BLOCK,
  })
  return { next, index, after }
}

describe('incremental snapshots', () => {
  it('copies the unchanged blocks and gives the text a full encode gives', async () => {
    const before = await encodeSnapshotReusing(indexOf(first), { blockBytes: BLOCK })
    expect(before.reusedBlocks).toBe(0)
    expect(blocksOf(before)).toBeGreaterThan(50)
    expect(text(before.bytes).equals(text(await encodeSnapshot(indexOf(first))))).toBe(true)

    const next = refreshed()
    const index = indexOf(next)
    const origins = originsOf(first, next)
    const after = await encodeSnapshotReusing(index, { previous: before.memory, origins, blockBytes: BLOCK })
    expect(text(after.bytes).equals(text(await encodeSnapshot(index)))).toBe(true)
    // The changed records' three blocks, and the last one with the appended records.
    expect(blocksOf(after) - after.reusedBlocks).toBeLessThanOrEqual(4)
    expect(after.reusedBlocks).toBeGreaterThan(blocksOf(before) - 5)

    const back = await decodeSnapshot(after.bytes)
    expect(linesOf(back)).toEqual(linesOf(index))
    expect(back.lookup('npm', 'pkg-9000', '1.0.0').malware.map((a) => a.id)).toEqual(['MAL-2025-9000'])
    expect(back.lookup('npm', 'pkg-1500', '1.0.0').malware.map((a) => a.summary)).toEqual([next[1501].summary])
    expect(back.lookup('npm', 'pkg-2000', '1.0.0').malware).toEqual([])
  })

  it('reuses every block when nothing changed, and the snapshot it makes is reusable in turn', async () => {
    const before = await encodeSnapshotReusing(indexOf(first), { blockBytes: BLOCK })
    const { next, index, after } = await encodeRefreshed(before)
    const same = Uint32Array.from(next, (_, r) => r + 1)
    const again = await encodeSnapshotReusing(index, { previous: after.memory, origins: same, blockBytes: BLOCK })
    expect(again.reusedBlocks).toBe(blocksOf(after))
    expect(Buffer.from(again.bytes).equals(Buffer.from(after.bytes))).toBe(true)
    for (const shared of [again.memory.members, again.memory.memberEnd, again.memory.recordEnd]) {
      expect(shared.buffer).toBeInstanceOf(SharedArrayBuffer)
    }
  })

  it('keeps no tiny blocks when records arrive between blocks and at the end, refresh after refresh', async () => {
    let advisories = first
    let snapshot = await encodeSnapshotReusing(indexOf(advisories), { blockBytes: BLOCK })
    const blocks = blocksOf(snapshot)
    for (let refresh = 0; refresh < 6; refresh++) {
      const next = [...advisories, report(10_000 + refresh * 3), report(10_001 + refresh * 3)]
      // Exactly between two blocks of the previous snapshot.
      next.splice(snapshot.memory.recordEnd[5 + refresh * 7], 0, report(10_002 + refresh * 3))
      const index = indexOf(next)
      const origins = originsOf(advisories, next)
      snapshot = await encodeSnapshotReusing(index, { previous: snapshot.memory, origins, blockBytes: BLOCK })
      // The block after the inserted record takes it in; the last block takes in the appended ones.
      expect(blocksOf(snapshot) - snapshot.reusedBlocks).toBe(2)
      expect(smallestBlock(snapshot, index)).toBeGreaterThanOrEqual(BLOCK / 4)
      expect(text(snapshot.bytes).equals(text(await encodeSnapshot(index)))).toBe(true)
      advisories = next
    }
    expect(blocksOf(snapshot)).toBe(blocks)
  })

  it('refuses a damaged multi-member snapshot', async () => {
    const { bytes, memory } = await encodeSnapshotReusing(indexOf(first), { blockBytes: BLOCK })
    const headerBytes = bytes.length - memory.members.length
    const boundary = headerBytes + memory.memberEnd[20]
    const refused = (damaged: Uint8Array) => expect(decodeSnapshot(damaged)).rejects.toBeInstanceOf(SnapshotError)

    // Cut inside a member, and cut cleanly between two (only the record count tells).
    await refused(bytes.subarray(0, boundary + 100))
    await expect(decodeSnapshot(bytes.subarray(0, boundary))).rejects.toThrow(/holds \d+ of 3000 records/)
    // A whole member left out from the middle.
    await refused(Buffer.concat([bytes.subarray(0, boundary), bytes.subarray(headerBytes + memory.memberEnd[21])]))
    // Bytes overwritten inside a member.
    const flipped = new Uint8Array(bytes)
    for (let i = boundary + 50; i < boundary + 250; i += 3) flipped[i] ^= 0xa5
    await refused(flipped)
    // The header member missing.
    await refused(bytes.subarray(headerBytes))
  })
})

describe('another process following the stored snapshot', () => {
  const sharedChunks = (a: PackedAdvisoryIndex, b: PackedAdvisoryIndex) =>
    a.data.chunks.filter((chunk) => b.data.chunks.some((other) => other.buffer === chunk.buffer)).length

  it('reads only the blocks it does not hold, and builds what a whole read builds', async () => {
    const before = await encodeSnapshotReusing(indexOf(first), { blockBytes: BLOCK })
    const followed = await followSnapshot(before.bytes, null)
    expect(followed.reusedBlocks).toBe(0)
    expect(linesOf(followed.index)).toEqual(linesOf(await decodeSnapshot(before.bytes)))
    expect(followed.memory).not.toBeNull()

    const { index, after } = await encodeRefreshed(before)
    const again = await followSnapshot(after.bytes, followed.memory)
    expect(linesOf(again.index)).toEqual(linesOf(index))
    expect(again.index.lookup('npm', 'pkg-9000', '1.0.0').malware.map((a) => a.id)).toEqual(['MAL-2025-9000'])
    expect(again.index.lookup('npm', 'pkg-2000', '1.0.0').malware).toEqual([])
    expect(again.reusedBlocks).toBe(after.reusedBlocks)
    expect(again.reusedBlocks).toBeGreaterThan(blocksOf(after) - 5)
    expect(sharedChunks(again.index, followed.index)).toBeGreaterThan(0)

    // And from that memory on: nothing changed, every block reused.
    const same = await followSnapshot(after.bytes, again.memory)
    expect(same.reusedBlocks).toBe(blocksOf(after))
    expect(linesOf(same.index)).toEqual(linesOf(index))
  })

  it('reads a snapshot written whole (no block list) whole, and refuses a damaged one', async () => {
    const whole = await encodeSnapshot(indexOf(first))
    const read = await followSnapshot(whole, null)
    expect(read.memory).toBeNull()
    expect(linesOf(read.index)).toEqual(linesOf(indexOf(first)))

    const { bytes } = await encodeSnapshotReusing(indexOf(first), { blockBytes: BLOCK })
    const damaged = Buffer.from(bytes)
    damaged[damaged.length - 100] ^= 0xff
    await expect(followSnapshot(damaged, null)).rejects.toBeInstanceOf(SnapshotError)
    await expect(followSnapshot(bytes.subarray(0, bytes.length - 10), null)).rejects.toBeInstanceOf(SnapshotError)
  })
})
