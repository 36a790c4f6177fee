/**
 * Retained-heap probe, preloaded into a server only by the soak and bench:memory:
 *   node --expose-gc --import ./scripts/memory/probe.mjs .output/server/index.mjs  (spawned with an IPC channel)
 * On each `{ type: 'memory-sample' }` message it runs a full garbage collection and answers with the heap
 * still in use afterwards (what is retained, not garbage V8 has yet to collect) and the RSS. Nothing of
 * this ships in the server: without the preload there is no such path.
 */
import { performance } from 'node:perf_hooks'
import { getHeapStatistics } from 'node:v8'

if (typeof process.send === 'function' && typeof globalThis.gc === 'function') {
  const gc = globalThis.gc
  process.on('message', (message) => {
    if (!message || message.type !== 'memory-sample') return
    const started = performance.now()
    // Two passes: the first may leave objects whose finalizers or weak callbacks free more in the second.
    gc()
    gc()
    const heap = getHeapStatistics()
    process.send({
      type: 'memory-sample',
      id: message.id,
      retainedHeap: heap.used_heap_size,
      heapLimit: heap.heap_size_limit,
      rss: process.memoryUsage.rss(),
      gcMs: performance.now() - started,
    })
  })
  // The channel must not keep a server alive that would otherwise exit.
  process.channel?.unref()
}
