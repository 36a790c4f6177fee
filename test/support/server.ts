import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { Agent as HttpAgent, request as httpRequest } from 'node:http'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

/** The first line of the start banner (server/app/start-banner.ts), printed when the server listens. */
const READY_BANNER = 'Package firewall ready'

/** The built server `npm test` produces (override with SERVER_ENTRY). */
export const SERVER_ENTRY = resolve(process.env.SERVER_ENTRY ?? '.output/server/index.mjs')

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port')),
      )
    })
  })
}

export interface RunningServer {
  url: string
  port: number
  env: Record<string, string>
  process: ChildProcess
  output: () => string
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/**
 * Starts the built server as a real process on a free loopback port and waits until it
 * answers /readyz. Storage: a fresh temp data dir unless `env` names REDIS_URL. The OSV feed is
 * off unless `env` names ADVISORY_FEED_URL: tests have no internet, and the default URL would
 * leave vulnerability and malware rules failing closed. `fileLimit`: `ulimit -n` of the process;
 * `port`: a port chosen beforehand (a provider registered its redirect URI on it); `entry`: another
 * build's `server/index.mjs` (a bench comparing two builds).
 */
export async function startServer(
  env: Record<string, string> = {},
  options: { fileLimit?: number; port?: number; entry?: string } = {},
): Promise<RunningServer> {
  // Another test process may take the free port between freePort() and the server's bind (two
  // workers run side by side): the server then exits at once with EADDRINUSE, and a fresh port is
  // tried, at most three times. Its output stays in `output()`. A port chosen by the caller is kept.
  let earlier = ''
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServerOnce(env, options, earlier)
    } catch (error) {
      const busy = error instanceof PortTakenError
      if (!busy || options.port !== undefined || attempt === 3) throw busy ? error.cause : error
      earlier = error.output
    }
  }
}

/** The server could not bind the free port it was given (taken meanwhile by another process). */
class PortTakenError extends Error {
  constructor(
    readonly output: string,
    override readonly cause: Error,
  ) {
    super('port taken')
  }
}

async function startServerOnce(
  env: Record<string, string>,
  options: { fileLimit?: number; port?: number; entry?: string },
  earlier: string,
): Promise<RunningServer> {
  const port = options.port ?? (await freePort())
  const entry = options.entry ?? SERVER_ENTRY
  const fullEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    DATA_DIR: env.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'pf-data-')),
    LOG_LEVEL: 'warn',
    ADVISORY_FEED_URL: 'off',
    // The suite's (vitest.config.ts); the benches run without it.
    ...(process.env.STORAGE_FREEZE_KEPT ? { STORAGE_FREEZE_KEPT: process.env.STORAGE_FREEZE_KEPT } : {}),
    ...env,
    PORT: String(port),
    NITRO_PORT: String(port),
    NITRO_HOST: '127.0.0.1',
    HOST: '127.0.0.1',
  }
  // `fileLimit`: the server runs under `ulimit -n` (a process short of file descriptors).
  const child = options.fileLimit
    ? spawn('bash', ['-c', `ulimit -n ${options.fileLimit} && exec "$0" "$1"`, process.execPath, entry], {
        env: fullEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(process.execPath, [entry], { env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = earlier
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 30_000
  for (;;) {
    if (child.exitCode !== null) {
      const early = new Error(`server exited early (${child.exitCode}):\n${output}`)
      throw /cannot listen on [^\n]*EADDRINUSE/.test(output.slice(earlier.length))
        ? new PortTakenError(output, early)
        : early
    }
    try {
      // Ready, and the answer is this child's: its start banner is printed once the port is its
      // own, so a server of another test process that took the port meanwhile is never mistaken for it.
      const response = await send(new URL(`${url}/readyz`), 'GET', FETCH_DEFAULTS, undefined)
      if (response.status >= 200 && response.status < 300 && output.includes(READY_BANNER, earlier.length)) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server did not become ready:\n${output}`)
    // A refused connection costs next to nothing: a short pause wastes less of each start.
    await new Promise((r) => setTimeout(r, 20))
  }
  return {
    url,
    port,
    env: fullEnv,
    process: child,
    output: () => output,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal)
      return exited
    },
  }
}

/** The token the bootstrap generated (fs storage). */
export function bootstrapToken(server: RunningServer): string {
  return readFileSync(join(server.env.DATA_DIR, 'bootstrap-token'), 'utf8').trim()
}

/**
 * Connections the API clients of this test process keep open. node:http, not fetch: the suite
 * makes tens of thousands of API calls, and fetch spent about 0.74 ms of the test process's CPU
 * on each against 0.27 ms here (same server, 1,000 calls each, 2026-11-27).
 */
// `timeout`: an idle connection is dropped after 4 s, before a Node server closes it (5 s), so no
// call is sent on a connection the server is closing (Node's agent honours the server's hint only
// when a timeout is set).
const keptAlive = new HttpAgent({ keepAlive: true, timeout: 4_000 })

/** The headers fetch sends by itself, sent here too so the server sees the same request. */
const FETCH_DEFAULTS = { accept: '*/*', 'accept-language': '*', 'sec-fetch-mode': 'cors', 'user-agent': 'node' }

/** One request as fetch makes it (redirects followed, 303 and a POST's 301/302 as a GET), answered as text. */
function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  redirects = 20,
): Promise<{ status: number; headers: Headers; text: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method, headers, agent: keptAlive }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.once('error', reject)
      response.once('end', () => {
        const status = response.statusCode!
        const location = response.headers.location
        if ([301, 302, 303, 307, 308].includes(status) && location && redirects > 0) {
          const asGet = status === 303 || ((status === 301 || status === 302) && method === 'POST')
          const { 'content-type': _type, 'content-length': _length, ...rest } = headers
          resolve(
            send(
              new URL(location, url),
              asGet ? 'GET' : method,
              asGet ? rest : headers,
              asGet ? undefined : body,
              redirects - 1,
            ),
          )
          return
        }
        const received = new Headers()
        const raw = response.rawHeaders
        for (let i = 0; i < raw.length; i += 2) received.append(raw[i], raw[i + 1])
        resolve({ status, headers: received, text: Buffer.concat(chunks).toString('utf8') })
      })
    })
    request.once('error', reject)
    request.end(body)
  })
}

/** A small JSON client for the API. */
export function apiClient(baseUrl: string, token: string) {
  return async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
    // As fetch: a length for a body, 0 for a POST or PUT without one; header names in any case.
    const length = payload !== undefined ? Buffer.byteLength(payload) : /^(POST|PUT)$/.test(method) ? 0 : null
    const sent: Record<string, string> = {
      ...FETCH_DEFAULTS,
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(length !== null ? { 'content-length': String(length) } : {}),
    }
    for (const [name, value] of Object.entries(headers)) sent[name.toLowerCase()] = value
    const response = await send(new URL(baseUrl + path), method, sent, payload)
    const text = response.text
    let json: any
    try {
      json = text ? JSON.parse(text) : null
    } catch {
      json = text
    }
    return { status: response.status, headers: response.headers, body: json }
  }
}
export type Api = ReturnType<typeof apiClient>

/** How a built server that was expected to stop by itself ended. */
export interface ExitedServer {
  code: number | null
  pid: number
  elapsedMs: number
  output: string
}

/**
 * Runs the built server on `port` with only `env` (plus PATH, HOME and a fresh data dir) until it
 * exits by itself; killed after `killAfterMs`. For start-up refusals.
 */
export function runServerUntilExit(
  env: Record<string, string>,
  port: number,
  killAfterMs = 20_000,
): Promise<ExitedServer> {
  const started = Date.now()
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'pf-exit-')),
      ...env,
      PORT: String(port),
      NITRO_PORT: String(port),
      NITRO_HOST: '127.0.0.1',
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs)
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(killer)
      resolve({ code, pid: child.pid!, elapsedMs: Date.now() - started, output })
    }),
  )
}

/**
 * `runServerUntilExit` on a free port, for start-up refusals that are not about the port: a port
 * another test process took between `freePort()` and the server's bind (the server says it
 * "cannot listen") is replaced by a fresh one, at most three times.
 */
export async function runServerOnFreePortUntilExit(
  env: Record<string, string>,
  killAfterMs?: number,
): Promise<ExitedServer> {
  for (let attempt = 1; ; attempt++) {
    const exited = await runServerUntilExit(env, await freePort(), killAfterMs)
    if (attempt === 3 || !/cannot listen on [^\n]*EADDRINUSE/.test(exited.output)) return exited
  }
}
