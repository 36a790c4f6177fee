import type { ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { RetainedSample } from './trend'

const PROBE = fileURLToPath(new URL('./probe.mjs', import.meta.url))

/** Node flags that load the retained-heap probe; the process must be spawned with an `'ipc'` stdio entry. */
export function probeArgs(): string[] {
  return ['--expose-gc', '--import', PROBE]
}

let nextId = 1

/**
 * Asks a probed process for a reading after a full GC. Rejects after `timeoutMs` (a process that
 * died or is stuck) or when the process has no IPC channel.
 */
export function sampleRetained(child: ChildProcess, timeoutMs = 15_000): Promise<RetainedSample> {
  return new Promise((resolve, reject) => {
    if (!child.connected) return reject(new Error('no IPC channel to the process'))
    const id = nextId++
    const done = () => {
      clearTimeout(timer)
      child.off('message', onMessage)
      child.off('exit', onExit)
    }
    const onMessage = (message: any) => {
      if (message?.type !== 'memory-sample' || message.id !== id) return
      done()
      resolve({ at: Date.now(), retainedHeap: message.retainedHeap, rss: message.rss })
    }
    const onExit = () => {
      done()
      reject(new Error('process exited'))
    }
    const timer = setTimeout(() => {
      done()
      reject(new Error(`no memory sample within ${timeoutMs} ms`))
    }, timeoutMs)
    child.on('message', onMessage)
    child.once('exit', onExit)
    child.send({ type: 'memory-sample', id }, (error) => {
      if (error) {
        done()
        reject(error)
      }
    })
  })
}
