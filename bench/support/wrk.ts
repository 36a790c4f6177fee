import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'

/** What one wrk run measured, in the units bench:api prints. */
export interface WrkResult {
  total: number
  rps: number
  p50: number
  p99: number
  errors: number
  bytesPerResponse: number
  /** wrk's own CPU per request (µs), from /usr/bin/time; NaN without it. */
  loadGeneratorPerRequestUs: number
}

const TIME = '/usr/bin/time'

/** Whether `wrk` (Debian package `wrk`) is on PATH. */
export async function wrkAvailable(): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('wrk', ['--version'], { stdio: 'ignore' })
    child.on('error', () => resolve(false))
    child.on('exit', () => resolve(true))
  })
}

/**
 * Loads `url` with wrk (C, one thread, `connections` connections) for `seconds`. It reads a
 * response in a few µs whatever its size, so on two shared cores it leaves the service the CPU that
 * autocannon, in the bench's own process, spends parsing large answers.
 */
export async function wrk(
  url: string,
  connections: number,
  seconds: number,
  headers: Record<string, string> = {},
): Promise<WrkResult> {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '-s', join(import.meta.dirname, 'wrk-summary.lua')]
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`)
  args.push(url)
  const timed = existsSync(TIME)
  const [command, argv] = timed ? [TIME, ['-f', 'WRK_CPU %U %S', 'wrk', ...args]] : ['wrk', args]
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] })
    let text = ''
    child.stdout.on('data', (chunk) => (text += chunk))
    child.stderr.on('data', (chunk) => (text += chunk))
    child.on('error', reject)
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited ${code}: ${text}`))))
  })
  const summaryLine = /WRK_SUMMARY (\{.*\})/.exec(output)
  if (!summaryLine) throw new Error(`no summary from wrk: ${output}`)
  const summary = JSON.parse(summaryLine[1]) as {
    requests: number
    durationUs: number
    bytes: number
    errors: number
    p50Us: number
    p99Us: number
  }
  const cpu = /WRK_CPU ([\d.]+) ([\d.]+)/.exec(output)
  return {
    total: summary.requests,
    rps: summary.requests / (summary.durationUs / 1e6),
    p50: summary.p50Us / 1000,
    p99: summary.p99Us / 1000,
    errors: summary.errors,
    bytesPerResponse: summary.bytes / summary.requests,
    loadGeneratorPerRequestUs: cpu ? ((Number(cpu[1]) + Number(cpu[2])) / summary.requests) * 1e6 : NaN,
  }
}
