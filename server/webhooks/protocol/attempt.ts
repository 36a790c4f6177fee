import type { Socket } from 'node:net'
import { LRUCache } from 'lru-cache'
import type { Agent, Dispatcher } from 'undici'
import { loadUndici } from '../../net/undici'
import { applicableRetryAfter, parseRetryAfter } from '../../../machines/webhook-delivery/retry'
import type { AttemptOutcome } from '../../../machines/webhook-delivery/types'
import type { WebhookSettings } from '../configuration/settings'
import { checkUrlSyntax, guardedLookup, isAllowedAddress, NOT_PUBLIC_ERROR, type LookupAll } from './ssrf'

type Undici = typeof import('undici')

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
  /** The address policy, and `WEBHOOK_ATTEMPT_TIMEOUT`, which also bounds a connect. */
  settings: Pick<WebhookSettings, 'allowedNetworks' | 'rejectedDomains' | 'attemptTimeoutMs'>
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
  settings: Pick<WebhookSettings, 'allowedNetworks' | 'rejectedDomains'>,
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

/** undici once loaded (server/net/undici.ts): after the first attempt, nothing is awaited before a send. */
let undici: Undici | null = null

/** The code of the error a connection refused after connecting carries (its message is the outcome's error). */
const PEER_REFUSED = 'ERR_WEBHOOK_PEER_REFUSED'

/**
 * Performs one delivery attempt: POST without redirects, with one timeout covering connect,
 * response and the first 4 KB of body. Never throws; every problem becomes a failure outcome.
 * Sent through undici's dispatcher: Node's `http.request` cost 50-67 µs of CPU per request against
 * 31-32 µs here (100 concurrent POSTs of 1 KB to a loopback receiver, 2-core machine, 2026-11-28),
 * and when one event reaches 100 webhooks every request of the burst is on the path of the last one.
 * @example const outcome = await sendAttempt({ url, body, headers, timeoutMs: 10_000, settings })
 */
export function sendAttempt(request: AttemptRequest): Promise<AttemptOutcome> {
  if (!undici)
    return loadUndici().then((loaded) => {
      undici = loaded
      return sendAttempt(request)
    })
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
  const agent = agentFor(request, undici)

  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false
    let controller: Dispatcher.DispatchController | null = null
    const settle = (outcome: AttemptOutcome) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(outcome)
    }
    let status = 0
    let retryAfter: string | string[] | undefined
    const chunks: Buffer[] = []
    let size = 0
    const complete = () => {
      const responseBody = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8')
      const retryAfterMs = applicableRetryAfter(status, parseRetryAfter(retryAfter, now()))
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
    const timer = setTimeout(() => {
      settle(refused('timeout'))
      controller?.abort(new Error('timeout'))
    }, request.timeoutMs)
    try {
      agent.dispatch(
        {
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          body: request.body,
          headers: { ...request.headers, 'content-type': 'application/json', 'user-agent': USER_AGENT },
        },
        {
          onRequestStart(started) {
            controller = started
            // Timed out while waiting for a connection: it goes no further.
            if (settled) started.abort(new Error('timeout'))
          },
          onResponseStart(_controller, statusCode, headers) {
            // An informational answer (100 Continue) is followed by the real one.
            if (statusCode < 200) return
            status = statusCode
            retryAfter = headers['retry-after']
          },
          onResponseData(started, chunk) {
            chunks.push(chunk)
            size += chunk.length
            if (size >= RESPONSE_BODY_LIMIT) {
              complete()
              // The rest is not read: the connection cannot go back to the pool.
              started.abort(new Error('response body limit reached'))
            }
          },
          // Read to the end, the connection returns to the pool for the next attempt in the turn of the
          // event loop after this one (undici's check-phase callback, queued right after this returns):
          // the outcome waits one turn longer, or an attempt that follows at once opened a connection
          // of its own. Answered in full, the attempt's timeout no longer applies meanwhile.
          onResponseEnd: () => {
            clearTimeout(timer)
            setImmediate(() => setImmediate(complete))
          },
          onResponseError(_controller, error: NodeJS.ErrnoException) {
            // A body cut short after the status arrived still leaves a usable status.
            if (status !== 0) return complete()
            if (error.code === NOT_PUBLIC_ERROR) return settle(refused(`url_not_public: ${error.message}`))
            if (error.code === PEER_REFUSED) return settle(refused(error.message))
            settle(refused(describe(error)))
          },
        },
      )
    } catch (error) {
      // A request undici refuses outright (a header it will not write) is a failed attempt too.
      settle(refused(describe(error as NodeJS.ErrnoException)))
    }
  })
}

/**
 * Idle kept-alive connections close after this, well before receivers' own keep-alive timeouts
 * (gunicorn 2 s, Node 5 s; a shorter `Keep-Alive: timeout` hint, less half a second, is honoured),
 * so a connection is not reused just as the receiver closes it. Nothing is resent behind the
 * record's back: undici retries no POST, and a reused connection that fails is a failed attempt
 * like any other, retried on schedule.
 */
const IDLE_SOCKET_MS = 1_000

/**
 * Kept-alive connections per address policy and resolver (one agent per process in the service;
 * tests pass their own). A connection is only ever made through the guarded lookup and judged
 * again once connected (`checkConnectedSocket`), so a pooled one is always to an address the
 * policy allowed, and judged once: its peer never changes.
 */
const agents = new WeakMap<AttemptRequest['settings'], Map<LookupAll | undefined, Agent>>()

function agentFor(request: AttemptRequest, { Agent, buildConnector }: Undici): Agent {
  let byLookup = agents.get(request.settings)
  if (!byLookup) agents.set(request.settings, (byLookup = new Map()))
  let agent = byLookup.get(request.lookup)
  if (agent) return agent
  const settings = request.settings
  // A connect (its name lookup included) may take as long as an attempt may, not undici's default
  // 10 s; the timeout still ends a connection attempt that outlives the attempt it was made for.
  // The configured timeout, not this request's: an attempt's own is cut to its lease window.
  const connector = buildConnector({
    lookup: guardedLookup(settings, request.lookup) as never,
    timeout: settings.attemptTimeoutMs,
  })
  agent = new Agent({
    keepAliveTimeout: IDLE_SOCKET_MS,
    keepAliveMaxTimeout: IDLE_SOCKET_MS,
    keepAliveTimeoutThreshold: 500,
    // The attempt's own timer ends it (`timeoutMs`).
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: (options, callback) =>
      connector(options, (error, socket) => {
        if (error || !socket) return callback(error ?? new Error('no socket'), null)
        // Headers and body go out only after the peer address passed the check.
        const problem = checkConnectedSocket(socket, settings)
        if (!problem) return callback(null, socket)
        socket.destroy()
        callback(Object.assign(new Error(problem), { code: PEER_REFUSED }), null)
      }),
  })
  byLookup.set(request.lookup, agent)
  return agent
}

function describe(error: NodeJS.ErrnoException): string {
  return error.code ? `${error.code}: ${error.message}` : error.message
}
