import { performance } from 'node:perf_hooks'

/**
 * A probe that GETs `url` every 5 ms, back to back, until stopped; `stop()` returns every latency,
 * sorted.
 * @example const running = probe(url, headers); await work(); const times = await running.stop()
 */
export function probe(url: string, headers: Record<string, string>) {
  const times: number[] = []
  let running = true
  let resets = 0
  const done = (async () => {
    while (running) {
      const start = performance.now()
      try {
        const response = await fetch(url, { headers })
        await response.arrayBuffer()
        if (!response.ok) throw new Error(`probe: ${response.status}`)
        times.push(performance.now() - start)
      } catch (error) {
        // A kept-alive connection closed under the probe (seen on an overloaded machine): counted, not timed.
        if ((error as { cause?: { code?: string } }).cause?.code !== 'ECONNRESET' || ++resets > 20) throw error
      }
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })()
  // Reported by stop(): an unhandled rejection here would hide the error that ended the run.
  done.catch(() => undefined)
  return {
    stop: async () => {
      running = false
      await done
      if (resets > 0) console.log(`  (probe: ${resets} connection resets, not timed)`)
      return times.sort((a, b) => a - b)
    },
  }
}
