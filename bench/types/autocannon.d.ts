// autocannon ships no types; the benchmarks use this much of it.
declare module 'autocannon' {
  interface Histogram {
    average: number
    p50: number
    p90: number
    p99: number
    max: number
  }
  interface Result {
    requests: Histogram & { total: number }
    latency: Histogram
    /** Bytes read from the server (status lines, headers and bodies). */
    throughput: Histogram & { total: number }
    errors: number
    non2xx: number
  }
  function autocannon(options: {
    url: string
    connections?: number
    duration?: number
    headers?: Record<string, string>
    method?: string
    body?: string
  }): Promise<Result>
  export default autocannon
}
