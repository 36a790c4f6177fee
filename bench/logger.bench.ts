/**
 * Logger benchmark: the lines this service writes most, each written N times by a child process
 * whose stdout and stderr are pipes this process drains (as a log collector would). Prints lines/s
 * for the access line (inside a request context), the same line written one write per line (the
 * baseline: before lines were written a turn at a time, and the ratio to it), the delivery attempt
 * line (with an error text the scrubber must read), a warning (stderr), and a debug line suppressed
 * at the default level. Asserts nothing.
 *   npm run bench:logger   (or npx tsx bench/logger.bench.ts [--lines 200000])
 */
import { spawn } from 'node:child_process'
import { parseArgs } from 'node:util'

const KINDS = ['access', 'access-1by1', 'attempt', 'warning', 'suppressed'] as const
type Kind = (typeof KINDS)[number]

async function child(kind: Kind, lines: number): Promise<void> {
  const { logger, createPino } = await import('../server/app/logger')
  const { runWithRequestContext } = await import('../server/app/request-context')
  // The baseline: the same pino logger writing each line to stdout on its own (before #27's batching).
  const oneByOne = createPino('info', process.stdout)
  const started = process.hrtime.bigint()
  for (let i = 0; i < lines; i++) {
    if (kind === 'access-1by1')
      runWithRequestContext({ requestId: `req-${i}` }, () =>
        oneByOne.info(
          { requestId: `req-${i}`, method: 'GET', route: '/v1/{ns}/config/{fw}', status: 200, durationMs: 1.4 },
          'request',
        ),
      )
    else if (kind === 'access')
      runWithRequestContext({ requestId: `req-${i}` }, () =>
        logger.info('request', { method: 'GET', route: '/v1/{ns}/config/{fw}', status: 200, durationMs: 1.4 }),
      )
    else if (kind === 'attempt')
      logger.info('webhook delivery attempt', {
        namespace: 'default',
        webhook: 'wh-1',
        deliveryId: `whdel-${i}`,
        attempt: 2,
        status: 'failed',
        events: 3,
        responseStatus: 503,
        durationMillis: 12,
        error: 'receiver answered 503 Service Unavailable',
        nextAttemptAt: '2026-11-26T16:00:00.000Z',
      })
    else if (kind === 'warning')
      logger.warn('upstream unavailable', { requestId: 'req-1', firewall: 'web', upstream: 'npmjs', reason: 'timeout' })
    else logger.debug('webhook delivery transition', { webhook: 'default/wh-1', from: 'active', to: 'delivering' })
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  process.send!(seconds)
}

async function measure(kind: Kind, lines: number): Promise<{ seconds: number; bytes: number }> {
  const proc = spawn(process.execPath, [...process.execArgv, process.argv[1]!], {
    env: { ...process.env, LOG_BENCH_CHILD: kind, LOG_BENCH_LINES: String(lines), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  })
  let bytes = 0
  proc.stdout!.on('data', (chunk: Buffer) => (bytes += chunk.length))
  proc.stderr!.on('data', (chunk: Buffer) => (bytes += chunk.length))
  const seconds = await new Promise<number>((resolve, reject) => {
    proc.once('message', (value) => resolve(Number(value)))
    proc.once('exit', (code) => reject(new Error(`bench child exited ${code} before reporting`)))
  })
  await new Promise((resolve) => proc.once('close', resolve))
  return { seconds, bytes }
}

async function main() {
  const { values } = parseArgs({ options: { lines: { type: 'string', default: '200000' } } })
  const lines = Number(values.lines)
  console.log(`\nLogger benchmark: ${lines} lines per kind, LOG_LEVEL=info, output drained through pipes\n`)
  const rates = new Map<Kind, number>()
  for (const kind of KINDS) {
    const { seconds, bytes } = await measure(kind, lines)
    rates.set(kind, lines / seconds)
    const ratio =
      kind === 'access' || kind === 'access-1by1' ? (lines / seconds / rates.get('access')!).toFixed(2) : null
    console.log(
      `${kind.padEnd(12)} ${Math.round(lines / seconds)
        .toString()
        .padStart(
          9,
        )} lines/s   ${((seconds / lines) * 1e6).toFixed(2).padStart(6)} µs/line   ${(bytes / lines).toFixed(0).padStart(4)} bytes/line${ratio ? `   ratio to access ${ratio}` : ''}`,
    )
  }
}

const childKind = process.env.LOG_BENCH_CHILD as Kind | undefined
if (childKind) void child(childKind, Number(process.env.LOG_BENCH_LINES))
else await main()
