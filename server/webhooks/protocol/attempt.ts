import http from 'node:http'
import https from 'node:https'
import type { Socket } from 'node:net'
import { LRUCache } from 'lru-cache'
import { applicableRetryAfter, parseRetryAfter } from '../../../machines/webhook-delivery/retry'
import type { AttemptOutcome } from '../../../machines/webhook-delivery/types'
import type { WebhookSettings } from '../configuration/settings'
import { checkUrlSyntax, guardedLookup, isAllowedAddress, NOT_PUBLIC_ERROR, type LookupAll } from './ssrf'

/** User agent on every delivery. */
export const USER_AGENT = 'service-d3-webhooks/1'
/** Bytes of the receiver's answer kept. */
const RESPONSE_BODY_LIMIT = 4 * 1024

export interface AttemptRequest {
  url: string
  /** Exact bytes that were signed. */
  body: string | Buffer
  /** The `webhook-id`, `webhook-timestamp` and `webhook-signature` headers. */
  headers: Record<string, string>
  timeoutMs: number
  settings: Pick<WebhookSettings, 'allowedNetworks' | 'rejectedDomains'>
  /** Name resolution, injectable for tests; always wrapped by the public-address guard. */
  lookup?: LookupAll
  /** Clock for durations and HTTP-date Retry-After; defaults to Date.now. */
  now?: () => number
}

/**
 * Refuses a connected socket whose peer is not an allowed address (the check after connecting
 * that docs/webhooks.md asks for; catches anything the lookup guard could not see).
 */
export function checkConnectedSocket(
  socket: Pick<Socket, 'remoteAddress'>,
  settings: AttemptRequest['settings'],
): string | null {
  const address = socket.remoteAddress
  if (!address) return 'connected socket has no remote address'
  return isAllowedAddress(address, settings) ? null : `connected to ${address}, which is not a public address`
}

/**
 * `checkUrlSyntax`'s answer by URL, per address policy (one per process in the service): a pure
 * function of both, and each attempt parsed the webhook's URL and judged its address again. The
 * URL object is shared by the attempts to it; nothing changes it.
 */
const urlChecks = new WeakMap<AttemptRequest['settings'], LRUCache<string, ReturnType<typeof checkUrlSyntax>>>()

function checkedUrl(request: AttemptRequest): ReturnType<typeof checkUrlSyntax> {
  let checks = urlChecks.get(request.settings)
  if (!checks) urlChecks.set(request.settings, (checks = new LRUCache({ max: 1_000 })))
  let check = checks.get(request.url)
  if (!check) checks.set(request.url, (check = checkUrlSyntax(request.url, request.settings)))
  return check
}

/**
 * Sockets whose peer passed `checkConnectedSocket`. A socket's peer never changes, and it is
 * reused only from the pool of the settings it was judged under (`poolsFor`): each attempt on a
 * kept-alive socket parsed and judged the same address again.
 */
const passed = new WeakSet<Socket>()

/**
 * Performs one delivery attempt: POST without redirects, with one timeout covering connect,
 * response and the first 4 KB of body. Never throws; every problem becomes a failure outcome.
 * @example const outcome = await sendAttempt({ url, body, headers, timeoutMs: 10_000, settings })
 */
export function sendAttempt(request: AttemptRequest): Promise<AttemptOutcome> {
  const now = request.now ?? Date.now
  const started = now()
  const finish = (partial: Omit<AttemptOutcome, 'durationMillis'>): AttemptOutcome => ({
    ...partial,
    durationMillis: Math.max(0, now() - started),
  })
  const refused = (error: string) => finish({ kind: 'failure', responseStatus: 0, responseBody: '', error })

  const check = checkedUrl(request)
  if (!check.ok) return Promise.resolve(refused(`${check.code}: ${check.message}`))
  const url = check.url

  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false
    const settle = (outcome: AttemptOutcome) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(outcome)
    }
    const req = post(url, request)
    const timer = setTimeout(() => {
      settle(refused('timeout'))
      req.destroy()
    }, request.timeoutMs)
    req.on('socket', (socket) => {
      // Headers and body go out only after the peer address passed the check (a pooled socket
      // passed it when it connected, and stays connected to that address: judged once).
      const onConnect = () => {
        const problem = passed.has(socket) ? null : checkConnectedSocket(socket, request.settings)
        if (problem) {
          settle(refused(problem))
          req.destroy()
          return
        }
        passed.add(socket)
        req.end(request.body)
      }
      if (socket.remoteAddress && !socket.connecting) onConnect()
      else socket.once('connect', onConnect)
    })
    req.on('error', (error: NodeJS.ErrnoException) => {
      settle(refused(error.code === NOT_PUBLIC_ERROR ? `url_not_public: ${error.message}` : describe(error)))
    })
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      let size = 0
      const complete = () => {
        const status = res.statusCode ?? 0
        const responseBody = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8')
        const retryAfterMs = applicableRetryAfter(status, parseRetryAfter(res.headers['retry-after'], now()))
        const ok = status >= 200 && status < 300
        settle(
          finish({
            kind: ok ? 'success' : 'failure',
            responseStatus: status,
            responseBody,
            ...(ok ? {} : status >= 300 && status < 400 ? { error: 'redirect not followed' } : {}),
            ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
          }),
        )
      }
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk)
        size += chunk.length
        if (size >= RESPONSE_BODY_LIMIT) {
          complete()
          // The rest is not read: the connection cannot go back to the pool.
          res.destroy()
        }
      })
      // Read to the end, the socket returns to the pool for the next attempt.
      res.on('end', complete)
      // A body cut short after the status arrived still leaves a usable status.
      res.on('error', complete)
      res.on('aborted', complete)
    })
  })
}

/**
 * Idle kept-alive sockets close after this, well before receivers' own keep-alive timeouts
 * (gunicorn 2 s, Node 5 s; a shorter `Keep-Alive: timeout` hint is honoured by the agent), so a
 * socket is not reused just as the receiver closes it. Nothing is resent behind the record's
 * back: a reused socket that fails is a failed attempt like any other, retried on schedule.
 */
const IDLE_SOCKET_MS = 1_000

interface Pools {
  http: http.Agent
  https: https.Agent
}

/**
 * Kept-alive connections per address policy and resolver (one pair per process in the service;
 * tests pass their own). A new socket is only ever made through the guarded lookup and judged
 * again once connected, so a pooled one is always to an address the policy allowed.
 */
const pools = new WeakMap<AttemptRequest['settings'], Map<LookupAll | undefined, Pools>>()

function poolsFor(request: AttemptRequest): Pools {
  let byLookup = pools.get(request.settings)
  if (!byLookup) {
    byLookup = new Map()
    pools.set(request.settings, byLookup)
  }
  let found = byLookup.get(request.lookup)
  if (!found) {
    // 256 (Node's default) free sockets per host: 100 webhooks on one receiver host keep one each
    // between bursts; at 64, each burst opened 36 new connections.
    const options = { keepAlive: true, timeout: IDLE_SOCKET_MS, maxFreeSockets: 256 }
    found = { http: new http.Agent(options), https: new https.Agent(options) }
    byLookup.set(request.lookup, found)
  }
  return found
}

function post(url: URL, request: AttemptRequest): http.ClientRequest {
  const secure = url.protocol === 'https:'
  const transport = secure ? https : http
  const agent = poolsFor(request)[secure ? 'https' : 'http']
  return transport.request(url, {
    method: 'POST',
    agent,
    lookup: guardedLookup(request.settings, request.lookup) as never,
    headers: {
      ...request.headers,
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'content-length': String(Buffer.byteLength(request.body)),
    },
  })
}

function describe(error: NodeJS.ErrnoException): string {
  return error.code ? `${error.code}: ${error.message}` : error.message
}
