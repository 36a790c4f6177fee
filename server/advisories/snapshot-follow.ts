import { gunzipSync } from 'node:zlib'
import { Gunzip } from 'fflate'
import { sharesLinesOf } from './load-memory'
import { PackedIndexBuilder, packedIndexFromData, type PackedAdvisoryIndex, type PackedIndexData } from './packed-index'
import type { RecordFacts } from './packed-index'
import type { Pace } from './pace'
import type { SnapshotMemory } from './snapshot-blocks'
import { checkAdvisory, decodeSnapshot, FORMAT, SnapshotError, type SnapshotHeader } from './snapshot'

/**
 * Another process's side of a refresh: it reads the new stored snapshot against the one it loaded
 * before. A snapshot written in blocks lists them in its header; a block whose compressed member
 * is byte for byte one this process already read holds the same records, which are taken from the
 * index it serves (their lines where they lie, as a download's refresh takes them); only the other
 * blocks are inflated and parsed. One record added to 200,000 then costs a block, not the whole.
 */

/** What a snapshot load leaves for the next one (a download's `LoadMemory` is one too). */
export interface FollowMemory {
  data: PackedIndexData
  facts: RecordFacts
  snapshot?: SnapshotMemory
}

export interface FollowedSnapshot {
  index: PackedAdvisoryIndex
  /** Null when the snapshot has no block list (written whole): the next one is read whole too. */
  memory: FollowMemory | null
  reusedBlocks: number
}

/** The header line, read by inflating no more of the snapshot than it takes. */
function headerOf(bytes: Uint8Array): SnapshotHeader {
  let text = ''
  const decoder = new TextDecoder('utf-8', { fatal: true })
  const gunzip = new Gunzip((chunk) => (text += decoder.decode(chunk, { stream: true })))
  try {
    for (let at = 0; at < bytes.length && !text.includes('\n'); at += 1024) {
      gunzip.push(bytes.subarray(at, Math.min(bytes.length, at + 1024)), at + 1024 >= bytes.length)
    }
    const header = JSON.parse(text.slice(0, text.indexOf('\n'))) as SnapshotHeader
    if (header?.format !== FORMAT) throw new SnapshotError('not an advisory snapshot')
    return header
  } catch (error) {
    if (error instanceof SnapshotError) throw error
    throw new SnapshotError(`snapshot header cannot be read: ${(error as Error).message}`)
  }
}

/** The block list, checked against the snapshot's size and record count; null when absent. */
function blocksOf(header: SnapshotHeader, size: number) {
  const blocks = header.blocks
  if (!blocks) return null
  const { memberEnd, recordEnd } = blocks
  const ordered = (list: unknown) =>
    Array.isArray(list) &&
    list.every((n, i) => Number.isInteger(n) && n >= 0 && (i === 0 || n >= (list[i - 1] as number)))
  if (!ordered(memberEnd) || !ordered(recordEnd) || memberEnd.length !== recordEnd.length)
    throw new SnapshotError('snapshot block list is damaged')
  const membersBytes = memberEnd.at(-1) ?? 0
  if (membersBytes > size || (recordEnd.at(-1) ?? 0) !== header.records)
    throw new SnapshotError('snapshot block list does not match the snapshot')
  return { memberEnd, recordEnd, headerBytes: size - membersBytes }
}

/** The gzip trailer (CRC-32 and size of the content) and length: the key two equal members share. */
const memberKey = (member: Uint8Array) => `${member.length}:${viewOf(member).toString('hex', member.length - 8)}`

/** The previous snapshot's blocks by member key. */
function previousBlocks(snapshot: SnapshotMemory | undefined): Map<string, number[]> {
  const byKey = new Map<string, number[]>()
  if (!snapshot) return byKey
  for (let b = 0; b < snapshot.memberEnd.length; b++) {
    const key = memberKey(memberOf(snapshot, b))
    byKey.set(key, [...(byKey.get(key) ?? []), b])
  }
  return byKey
}

const viewOf = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

const memberOf = (snapshot: SnapshotMemory, b: number) =>
  snapshot.members.subarray(b === 0 ? 0 : snapshot.memberEnd[b - 1], snapshot.memberEnd[b])

/**
 * Reads a stored snapshot into a new index, taking the blocks `previous` already holds from it.
 * Throws `SnapshotError` when the snapshot is damaged. A snapshot without a block list is read
 * whole (`decodeSnapshot`).
 * @example const { index, memory } = await followSnapshot(bytes, held.followed, pacer())
 */
export async function followSnapshot(
  bytes: Uint8Array,
  previous: FollowMemory | null,
  pace?: Pace,
): Promise<FollowedSnapshot> {
  const header = headerOf(bytes)
  const blocks = blocksOf(header, bytes.length)
  if (!blocks) return { index: await decodeSnapshot(bytes, pace), memory: null, reusedBlocks: 0 }
  const { memberEnd, recordEnd, headerBytes } = blocks
  const builder = new PackedIndexBuilder()
  const known = previousBlocks(previous?.snapshot)
  const source = previous && new PreviousRecords(previous)
  let reusedBlocks = 0
  for (let b = 0; b < memberEnd.length; b++) {
    const member = bytes.subarray(headerBytes + (b === 0 ? 0 : memberEnd[b - 1]), headerBytes + memberEnd[b])
    const count = recordEnd[b] - (b === 0 ? 0 : recordEnd[b - 1])
    const same = source?.blockLike(member, known)
    if (same !== undefined && source) {
      source.addBlock(builder, same)
      reusedBlocks++
    } else readBlock(builder, member, count, b)
    await pace?.()
  }
  if (builder.size !== header.records)
    throw new SnapshotError(`snapshot holds ${builder.size} of ${header.records} records`)
  const data = builder.finishData()
  const members = new Uint8Array(new SharedArrayBuffer(bytes.length - headerBytes))
  members.set(bytes.subarray(headerBytes))
  const snapshot: SnapshotMemory = {
    members,
    memberEnd: sharedOf(memberEnd),
    recordEnd: sharedOf(recordEnd),
  }
  return { index: packedIndexFromData(data), memory: { data, facts: builder.facts(), snapshot }, reusedBlocks }
}

function sharedOf(values: number[]): Uint32Array {
  const out = new Uint32Array(new SharedArrayBuffer(values.length * 4))
  out.set(values)
  return out
}

/** Inflates and parses one block's member: exactly `count` advisories, one per line. */
function readBlock(builder: PackedIndexBuilder, member: Uint8Array, count: number, b: number): void {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(gunzipSync(member))
  } catch (error) {
    throw new SnapshotError(`snapshot block ${b} cannot be decompressed: ${(error as Error).message}`)
  }
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  if (lines.length !== count) throw new SnapshotError(`snapshot block ${b} holds ${lines.length} of ${count} records`)
  for (const line of lines) {
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      throw new SnapshotError(`snapshot block ${b} has a line that is not JSON`)
    }
    if (!checkAdvisory(value) || !builder.add(value, line))
      throw new SnapshotError(`snapshot block ${b} has a line that is not a new advisory`)
  }
}

/** The records of the index a process serves, added to a new one by block, lines shared or copied. */
class PreviousRecords {
  private readonly chunks: Buffer[]
  private readonly share: boolean

  constructor(private readonly previous: FollowMemory) {
    this.chunks = previous.data.chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength))
    this.share = sharesLinesOf(previous.data)
  }

  /** The previous block whose member is byte for byte `member`, if any. */
  blockLike(member: Uint8Array, known: Map<string, number[]>): number | undefined {
    const snapshot = this.previous.snapshot
    if (!snapshot) return undefined
    return known.get(memberKey(member))?.find((b) => viewOf(memberOf(snapshot, b)).equals(member))
  }

  addBlock(builder: PackedIndexBuilder, block: number): void {
    const { data, facts, snapshot } = this.previous
    const first = block === 0 ? 0 : snapshot!.recordEnd[block - 1]
    for (let r = first; r < snapshot!.recordEnd[block]; r++) {
      const from = data.chunkOf[r]
      const line = { from, chunk: this.chunks[from], start: data.startOf[r], length: data.lengthOf[r] }
      const keys = facts.keyHash.subarray(facts.keyStart[r], facts.keyStart[r + 1])
      if (!builder.addLine(line, facts.idHash[r], keys, facts.ecosystems[r], this.share))
        throw new SnapshotError('snapshot repeats an advisory')
    }
  }
}
