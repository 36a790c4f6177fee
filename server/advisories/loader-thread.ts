import { readlinkSync } from 'node:fs'
import { constants, setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import { loadOsvZip } from '../firewall/advisories/feed-load'
import { packedIndexTransferList } from '../firewall/advisories/packed-index'
import { decodeSnapshot, encodeSnapshot } from '../firewall/advisories/snapshot'
import type { LoaderReply, LoaderRequest } from './loader-protocol'

/**
 * The body of the advisory loader thread (bundled as its own entry, `advisory-loader.mjs`): it
 * receives an archive's bytes as they download, reads and indexes them and compresses the
 * snapshot (or reads a stored snapshot back), and hands back the packed index as transferable
 * buffers. The request thread only forwards bytes, so a refresh of 200,000 records does not slow
 * the requests it serves.
 */
function run(port: NonNullable<typeof parentPort>): void {
  const queue: Uint8Array[] = []
  let ended = false
  let wake: (() => void) | null = null
  port.on('message', (message: LoaderRequest) => {
    if (message.type === 'snapshot') return void readSnapshot(port, message.bytes)
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
      const loaded = await loadOsvZip(source())
      // A copy with a buffer of its own: a small result may sit in Node's shared Buffer pool.
      const snapshot = new Uint8Array(await encodeSnapshot(loaded.index))
      const { records, invalid, withdrawn, warnings } = loaded
      const data = loaded.index.data
      const reply: LoaderReply = { type: 'done', data, snapshot, records, invalid, withdrawn, warnings }
      port.postMessage(reply, [...packedIndexTransferList(data), snapshot.buffer as ArrayBuffer])
    } catch (error) {
      port.postMessage({ type: 'failed', message: (error as Error)?.message ?? String(error) } satisfies LoaderReply)
    }
  })()
}

async function readSnapshot(port: NonNullable<typeof parentPort>, bytes: Uint8Array): Promise<void> {
  try {
    const index = await decodeSnapshot(bytes)
    const figures = { records: index.size, invalid: 0, withdrawn: 0, warnings: [] }
    const reply: LoaderReply = { type: 'done', data: index.data, snapshot: new Uint8Array(0), ...figures }
    port.postMessage(reply, packedIndexTransferList(index.data))
  } catch (error) {
    port.postMessage({ type: 'failed', message: (error as Error)?.message ?? String(error) } satisfies LoaderReply)
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
  // The benchmark turns it off to show what it is worth.
  if ((workerData as { lowPriority?: boolean } | undefined)?.lowPriority !== false) yieldCpu()
  run(parentPort)
}
