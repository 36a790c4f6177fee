import { readlinkSync } from 'node:fs'
import { constants, setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import { followSnapshot, type FollowMemory } from './snapshot-follow'
import { downloadArchive, readArchive, type LoadedArchive } from './archive-read'
import type { FeedRequest } from './feed-client'
import type { ArchiveReply, LoaderReply, LoaderRequest, LoaderStart } from './loader-protocol'

type Port = NonNullable<typeof parentPort>

/**
 * The body of the advisory loader thread (bundled as its own entry, `advisory-loader.mjs`): it
 * downloads the feed archive itself and reads it as it arrives (or reads the bytes it is sent, or
 * a stored snapshot), compresses the snapshot, and hands back the packed index, which lives in
 * shared memory. The request thread only posts the job and takes the answer, so a refresh of
 * 200,000 records does not slow the requests it serves. `previous` is the memory of the load
 * served now: the entries it already holds are not read again.
 */
function receive(port: Port, start: Partial<LoaderStart>): void {
  const previous = start.previous ?? null
  const followed = start.followed ?? null
  const queue: Uint8Array[] = []
  let ended = false
  let wake: (() => void) | null = null
  port.on('message', (message: LoaderRequest) => {
    if (message.type === 'snapshot') return void readSnapshot(port, message.bytes, followed)
    if (message.type === 'chunk') queue.push(message.bytes)
    else ended = true
    wake?.()
  })
  async function* source(): AsyncIterable<Uint8Array> {
    for (;;) {
      const next = queue.shift()
      if (next) {
        yield next
        // One acknowledgement per chunk: the sender keeps only a few in flight.
        port.postMessage({ type: 'ack' } satisfies LoaderReply)
        continue
      }
      if (ended) return
      await new Promise<void>((resolve) => (wake = resolve))
      wake = null
    }
  }
  void (async () => {
    try {
      sendArchive(port, await readArchive(source(), undefined, previous, start.maxEntries))
    } catch (error) {
      sendFailure(port, error)
    }
  })()
}

/** Fetches the archive here, reading the body as it arrives; answers 304s and failures too. */
async function download(port: Port, request: FeedRequest, previous: LoaderStart['previous']): Promise<void> {
  try {
    const outcome = await downloadArchive(request, { previous })
    if (outcome.kind === 'not-modified') return port.postMessage({ type: 'not-modified' } satisfies LoaderReply)
    sendArchive(port, outcome.loaded, { etag: outcome.etag, lastModified: outcome.lastModified })
  } catch (error) {
    sendFailure(port, error)
  }
}

function sendArchive(port: Port, loaded: LoadedArchive, validators: Pick<ArchiveReply, 'etag' | 'lastModified'> = {}) {
  const { index, ...rest } = loaded
  const reply: LoaderReply = { type: 'archive', data: index.data, ...rest, ...validators }
  // The index and memory are shared memory; only the snapshot is an ArrayBuffer, moved rather than copied.
  port.postMessage(reply, [rest.snapshot.buffer as ArrayBuffer])
}

function sendFailure(port: Port, error: unknown): void {
  port.postMessage({ type: 'failed', message: (error as Error)?.message ?? String(error) } satisfies LoaderReply)
}

async function readSnapshot(port: Port, bytes: Uint8Array, followed: FollowMemory | null): Promise<void> {
  try {
    const { index, memory, reusedBlocks } = await followSnapshot(bytes, followed)
    port.postMessage({ type: 'snapshot', data: index.data, memory, reusedBlocks } satisfies LoaderReply)
  } catch (error) {
    sendFailure(port, error)
  }
}

/**
 * Lowers this thread's CPU priority to nice 10 so that, on a busy machine, the requests the process
 * serves (and the clients and registries beside it) are scheduled first. Without it a refresh of
 * 200,000 records took a whole core from them. Not 19: at 19 the thread starved while the
 * process's other threads were busy (a 29-record load took over 20 s beside a test suite), and
 * data that is not loaded makes advisory rules fail closed. On Linux, setpriority on a thread id
 * applies to that thread alone; elsewhere (no /proc/thread-self) it keeps the process's priority.
 */
function yieldCpu(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    if (Number.isInteger(tid) && tid > 0 && tid !== process.pid)
      setPriority(tid, constants.priority.PRIORITY_BELOW_NORMAL)
  } catch {
    // Not Linux, or not allowed: the load still runs off the request thread.
  }
}

if (parentPort) {
  const start = workerData as Partial<LoaderStart> | undefined
  // The benchmark turns it off to show what it is worth.
  if (start?.lowPriority !== false) yieldCpu()
  if (start?.download) void download(parentPort, start.download, start.previous ?? null)
  else receive(parentPort, start ?? {})
}
