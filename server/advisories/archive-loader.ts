import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Worker } from 'node:worker_threads'
import type { LoadMemory } from './load-memory'
import { packedIndexFromData } from './packed-index'
import type { Pace } from './pace'
import { followSnapshot, type FollowedSnapshot, type FollowMemory } from './snapshot-follow'
import { downloadArchive, readArchive, type FeedOutcome, type LoadedArchive } from './archive-read'
import type { FeedRequest } from './feed-client'
import type { ArchiveReply, LoaderReply, LoaderRequest, LoaderStart } from './loader-protocol'

export type { FeedOutcome, LoadedArchive } from './archive-read'

/** What a download job takes besides the request: the served load's memory, pacing, a stop. */
export interface DownloadOptions {
  pace?: Pace
  previous?: LoadMemory | null
  /** Aborts the download (the service stopping). */
  signal?: AbortSignal
}

/** Where the network and CPU-heavy work happens: feed downloads, imported archives, stored snapshots. */
export interface ArchiveLoader {
  /**
   * Downloads the feed archive (conditionally) and reads it as it arrives. Throws a message fit
   * for `lastError` when the download fails or the archive cannot be read.
   */
  download(request: FeedRequest, options?: DownloadOptions): Promise<FeedOutcome>
  /**
   * Throws when the archive cannot be read. `previous`: the memory of the load whose index is
   * served now (its unchanged entries are taken, not read again); null for a full read.
   */
  archive(
    source: AsyncIterable<Uint8Array>,
    pace?: Pace,
    previous?: LoadMemory | null,
    maxEntries?: number,
  ): Promise<LoadedArchive>
  /**
   * Reads a stored snapshot; `previous`: what the load of the index served now left, whose blocks
   * are taken rather than read again. Throws when the snapshot is damaged.
   */
  snapshot(bytes: Uint8Array, pace?: Pace, previous?: FollowMemory | null): Promise<FollowedSnapshot>
}

/** Chunks sent to the loader thread and not read yet: bounds what waits in memory. */
const IN_FLIGHT = 8

/** Loads on the calling thread in paced slices (the admin CLI, and where no loader thread exists). */
export const inThreadLoader: ArchiveLoader = {
  download: (request, options) => downloadArchive(request, options),
  archive: (source, pace, previous, maxEntries) => readArchive(source, pace, previous, maxEntries),
  snapshot: (bytes, pace, previous) => followSnapshot(bytes, previous ?? null, pace),
}

/** The loader thread's entry: beside index.mjs in the build, a tsx bootstrap next to the sources. */
function loaderEntry(): URL | string | null {
  if (import.meta.url.endsWith('.ts')) return new URL('./loader-thread.dev.mjs', import.meta.url)
  const built = join(dirname(process.argv[1] ?? '.'), 'advisory-loader.mjs')
  return existsSync(built) ? built : null
}

/** One job on a fresh thread: `send` feeds it, the reply settles it, the thread ends either way. */
function inThread(
  entry: URL | string,
  start: LoaderStart,
  send: (worker: Worker, acked: () => Promise<void>) => Promise<void>,
  signal?: AbortSignal,
) {
  // The previous load's memory is all shared memory: the thread reads it where it is.
  const worker = new Worker(entry, { workerData: start })
  // Ending the thread ends its download too (sockets, timers); the job then rejects.
  signal?.addEventListener('abort', () => void worker.terminate(), { once: true })
  let settled = false
  let inFlight = 0
  let wakeSender: (() => void) | null = null
  const result = new Promise<Exclude<LoaderReply, { type: 'ack' | 'failed' }>>((resolve, reject) => {
    const settle = (fn: () => void) => {
      if (settled) return
      settled = true
      wakeSender?.()
      fn()
    }
    worker.on('message', (reply: LoaderReply) => {
      if (reply.type === 'ack') {
        inFlight--
        wakeSender?.()
      } else if (reply.type === 'failed') settle(() => reject(new Error(reply.message)))
      else settle(() => resolve(reply))
    })
    worker.on('error', (error) => settle(() => reject(error)))
    worker.on('exit', (code) => settle(() => reject(new Error(`advisory loader thread exited (${code})`))))
  })
  // Waits while too many chunks are unread; resolves at once when the job is over.
  const acked = async () => {
    inFlight++
    while (inFlight >= IN_FLIGHT && !settled) await new Promise<void>((resolve) => (wakeSender = resolve))
    wakeSender = null
  }
  return Promise.all([result, send(worker, acked)])
    .then(([reply]) => reply)
    .finally(() => void worker.terminate())
}

/**
 * Loads on a worker thread: it downloads the feed itself (an imported archive's bytes are
 * forwarded to it) and hands back the packed index in shared memory, so a refresh does not slow
 * the requests the request thread serves. One thread per job: starting one costs about 1 ms of
 * the request thread and 60 ms on the new thread, and its heap is gone with it. The thread runs at
 * a lower CPU priority (nice 10) unless `lowPriority` is false. Null when the build has no loader thread entry.
 */
export function threadLoader(options: { lowPriority?: boolean; entry?: string } = {}): ArchiveLoader | null {
  // `entry`: the built thread (advisory-loader.mjs) for a caller running from sources (benchmarks).
  const entry = options.entry ?? loaderEntry()
  if (!entry) return null
  const lowPriority = options.lowPriority ?? true
  return {
    async download(request, job = {}) {
      const start = { lowPriority, previous: job.previous ?? null, download: request }
      // Nothing to send: the thread fetches the body itself and answers once.
      const reply = await inThread(entry, start, async () => undefined, job.signal)
      if (reply.type === 'not-modified') return { kind: 'not-modified' }
      if (reply.type !== 'archive') throw new Error('advisory loader thread answered out of turn')
      return { kind: 'changed', etag: reply.etag, lastModified: reply.lastModified, loaded: loadedOf(reply) }
    },
    async archive(source, _pace, previous, maxEntries) {
      const start = { lowPriority, previous: previous ?? null, maxEntries }
      const reply = await inThread(entry, start, async (worker, acked) => {
        for await (const chunk of source) {
          // A copy with a buffer of its own, transferred: the body's chunks may share theirs.
          const bytes = new Uint8Array(chunk)
          worker.postMessage({ type: 'chunk', bytes } satisfies LoaderRequest, [bytes.buffer])
          await acked()
        }
        worker.postMessage({ type: 'end' } satisfies LoaderRequest)
      })
      if (reply.type !== 'archive') throw new Error('advisory loader thread answered out of turn')
      return loadedOf(reply)
    },
    async snapshot(bytes, _pace, previous) {
      const start = { lowPriority, previous: null, followed: previous ?? null }
      const reply = await inThread(entry, start, async (worker) => {
        worker.postMessage({ type: 'snapshot', bytes } satisfies LoaderRequest)
      })
      if (reply.type !== 'snapshot') throw new Error('advisory loader thread answered out of turn')
      return { index: packedIndexFromData(reply.data), memory: reply.memory, reusedBlocks: reply.reusedBlocks }
    },
  }
}

function loadedOf(reply: ArchiveReply): LoadedArchive {
  const { data, snapshot, records, invalid, withdrawn, warnings, reused, memory, ranges } = reply
  return { index: packedIndexFromData(data), snapshot, records, invalid, withdrawn, warnings, reused, memory, ranges }
}
