import { sleep } from './event-producer'

/** What a paced load of rule upserts did. */
export interface UpsertLoad {
  /** Upserts answered 2xx, and the others. */
  done: number
  failed: number
  /** Milliseconds from sending to the whole answer, sorted. */
  latencies: number[]
  /** Wall time of the load, ms. */
  elapsedMs: number
}

/**
 * `clients` clients upsert rules at `rate` upserts/s all together for `seconds`, client `c` on
 * firewall `${prefix}-${c}` (ten rule ids each, so a firewall stays small), each call going to the
 * next of `urls` in turn (two service processes share the load). A client sends its k-th upsert at
 * its due time, or at once when it is late, and none after `seconds`: the rate asked holds while
 * the service keeps up, and what it did not keep up with shows in the count done.
 */
export async function upsertLoad(options: {
  urls: string[]
  token: string
  ns: string
  prefix: string
  clients: number
  rate: number
  seconds: number
}): Promise<UpsertLoad> {
  const { urls, token, ns, prefix, clients, rate, seconds } = options
  const latencies: number[] = []
  let done = 0
  let failed = 0
  let turn = 0
  const started = performance.now()
  const end = started + seconds * 1000
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let k = 0; ; k++) {
        const due = started + ((k * clients + client) * 1000) / rate
        // Not past the end: what the service did not keep up with is left undone, not made up.
        if (due >= end || performance.now() >= end) return
        const wait = due - performance.now()
        if (wait > 0) await sleep(wait)
        const url = urls[turn++ % urls.length]
        const sent = performance.now()
        const response = await fetch(`${url}/v1/${ns}/config/${prefix}-${client}/rules/r${k % 10}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            executionPhase: 'download',
            selector: { function: { name: 'packageName', patterns: [`evil-${client}-${k}-*`] } },
            ruleEffect: { block: true, log: true },
          }),
        })
        await response.arrayBuffer()
        latencies.push(performance.now() - sent)
        if (response.ok) done++
        else failed++
      }
    }),
  )
  latencies.sort((a, b) => a - b)
  return { done, failed, latencies, elapsedMs: performance.now() - started }
}
