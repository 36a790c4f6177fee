import { resolve } from 'node:path'
import { parseArgs } from 'node:util'

/** Everything a soak run can be told; `parseSoakArgs` fills it from the command line. */
export interface SoakOptions {
  /** How long the producer and the chaos loop run. */
  durationMs: number
  /** Server processes on the one Redis. */
  processes: number
  /** A random process is SIGKILLed every `killMinMs..killMaxMs`; 0 turns chaos off. */
  killMinMs: number
  killMaxMs: number
  /** Bounded wait for the backlog after producing stops. */
  drainTimeoutMs: number
  /** Fraction of delivery ids the receiver always fails (retry exhaustion: failed, dropped, quarantine). */
  doomRate: number
  /** WEBHOOK_BUFFER for the servers (small values exercise buffer_overflow). */
  buffer: number
  /** Built server entry (SERVER_ENTRY, default `.output/server/index.mjs`). */
  serverEntry: string
  /** Extra env for the servers (e.g. retry schedule); merged over the soak defaults. */
  serverEnv: Record<string, string>
  /** Progress lines on stderr. */
  verbose: boolean
  /** The servers' storage: one Redis, or a 3-master Redis Cluster (REDIS_CLUSTER_NODES, else one started for the run). */
  storage: 'redis' | 'cluster'
  /** One more process, never killed, whose retained heap is followed for the whole run (`--no-witness` turns it off). */
  witness: boolean
  /** Nodes of an existing cluster for `storage: 'cluster'` (default REDIS_CLUSTER_NODES; unset: one is started). */
  clusterNodes?: string
}

export const USAGE = `usage: npm run soak -- [--minutes N | --seconds N] [--kill-every MIN-MAX] [--processes 3]
       [--drain-timeout SECONDS] [--doom-rate 0.015] [--buffer 5000] [--cluster] [--no-witness] [--quiet]
  --cluster     the servers share a Redis Cluster (REDIS_CLUSTER_NODES, else a 3-master one
                started for the run with redis-server) instead of one Redis
  --no-witness  no extra never-killed process (its retained heap after a full GC must stay flat
                after warm-up: under 1 MiB per 10 minutes)
  SERVER_ENTRY  built server (default .output/server/index.mjs; build one with
                NITRO_OUTPUT_DIR=.output-soak npx nitro build)
  REDIS_URL     Redis to use (default: a private redis-server on a free loopback port)`

/** Soak defaults for the server env: short retries and leases so recovery happens within a run. */
export const SERVER_ENV_DEFAULTS: Record<string, string> = {
  WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
  // The soak's Verdaccio listens on loopback, which the upstream address policy refuses by default.
  UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
  WEBHOOK_RETRY_SCHEDULE: '1s,2s,4s,8s,16s',
  WEBHOOK_LEASE: '3s',
  WEBHOOK_QUARANTINE: '5s',
  WEBHOOK_ATTEMPT_TIMEOUT: '10s',
  API_RATE_LIMIT: 'off',
  REGISTRY_RATE_LIMIT: 'off',
  // No internet here: the OSV feed's default URL is unreachable (the soak uses no advisory rules).
  ADVISORY_FEED_URL: 'off',
  LOG_LEVEL: 'warn',
}

export function defaultOptions(overrides: Partial<SoakOptions> = {}): SoakOptions {
  return {
    durationMs: 60_000,
    processes: 3,
    killMinMs: 8_000,
    killMaxMs: 15_000,
    drainTimeoutMs: 180_000,
    doomRate: 0.015,
    buffer: 5000,
    serverEntry: resolve(process.env.SERVER_ENTRY ?? '.output/server/index.mjs'),
    serverEnv: {},
    verbose: true,
    storage: 'redis',
    witness: true,
    ...overrides,
  }
}

function positive(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback
  const value = Number(text)
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a non-negative number, got "${text}"`)
  return value
}

/**
 * @example parseSoakArgs(['--minutes', '10']).durationMs // 600000
 * @example parseSoakArgs(['--kill-every', '20-30']).killMinMs // 20000
 */
export function parseSoakArgs(argv: string[]): SoakOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      minutes: { type: 'string' },
      seconds: { type: 'string' },
      'kill-every': { type: 'string' },
      processes: { type: 'string' },
      'drain-timeout': { type: 'string' },
      'doom-rate': { type: 'string' },
      buffer: { type: 'string' },
      quiet: { type: 'boolean' },
      cluster: { type: 'boolean' },
      'no-witness': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  })
  if (values.help) throw new Error(USAGE)
  const base = defaultOptions()
  const durationMs =
    values.seconds !== undefined
      ? positive('seconds', values.seconds, 60) * 1000
      : positive('minutes', values.minutes, 1) * 60_000
  let [killMinMs, killMaxMs] = [base.killMinMs, base.killMaxMs]
  if (values['kill-every'] !== undefined) {
    const match = /^(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?$/.exec(values['kill-every'])
    if (!match)
      throw new Error(`--kill-every takes SECONDS or MIN-MAX seconds (0 = no kills), got "${values['kill-every']}"`)
    killMinMs = Number(match[1]) * 1000
    killMaxMs = Number(match[2] ?? match[1]) * 1000
  }
  const processes = positive('processes', values.processes, base.processes)
  if (processes < 1 || !Number.isInteger(processes)) throw new Error('--processes must be a whole number >= 1')
  return {
    ...base,
    durationMs,
    processes,
    killMinMs,
    killMaxMs: Math.max(killMinMs, killMaxMs),
    drainTimeoutMs: positive('drain-timeout', values['drain-timeout'], base.drainTimeoutMs / 1000) * 1000,
    doomRate: positive('doom-rate', values['doom-rate'], base.doomRate),
    buffer: positive('buffer', values.buffer, base.buffer),
    verbose: !values.quiet,
    storage: values.cluster ? 'cluster' : 'redis',
    witness: !values['no-witness'],
  }
}
