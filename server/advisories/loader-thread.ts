import { parentPort } from 'node:worker_threads'
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

if (parentPort) run(parentPort)
