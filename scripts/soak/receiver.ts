import { createHash } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import Redis from 'ioredis'
import { createReceiver, MemoryStore, RedisStore, retryLater, verify, type WebhookReceiver } from '../../receiver'
import type { Event } from '../../receiver'

export type Answer = 'ok' | 'slow-ok' | '500' | '429' | 'reset' | 'interrupted'

/** A delivered event as the receiver keeps it (system events keep their data). */
export interface ReceivedEvent {
  id: string
  type: string
  data?: { webhook?: string; reason?: string; droppedEvents?: number; bufferedEvents?: number }
}

/** One POST the receiver got: one attempt of one delivery. */
export interface Attempt {
  /** Receiver path name = webhook name of the soak. */
  hook: string
  deliveryId: string
  events: ReceivedEvent[]
  arrivedAt: number
  /** Arrival order over the whole receiver. */
  seq: number
  answer?: Answer
  /** Answered 2xx (the sender saw success unless it died first). */
  acked: boolean
  verified: boolean
  /** Another attempt for the same webhook was in flight when this one arrived. */
  overlapped: boolean
}

export interface ReceiverOptions {
  /** Fraction of delivery ids that are always refused (their batch exhausts its retries). */
  doomRate: number
  /** Consecutive refusals of one delivery id after which a non-doomed one is accepted. */
  maxRefusals?: number
  /** Where the kit keeps its dedupe marks (a RedisStore under this prefix); in memory when absent. */
  redis?: { url: string; prefix: string }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * One HTTP server, one path per webhook (`/hook/<name>`), each answered by the receiver kit
 * (receiver/) in front of an "application" that counts every event it handles. Answers at
 * random: mostly 2xx, some after ~2 s; some 500 (the application throws part-way through the
 * batch), some 429 with `Retry-After: 1` (it pushes back part-way), some by resetting the
 * connection after the application handled the whole batch (the sender never hears of it).
 * Doomed delivery ids are refused before the kit (500 or reset), so their batch runs out of
 * retries unhandled. Once a delivery id was accepted it is always accepted. Records every
 * attempt and flags an attempt that arrives while another of the same webhook is in flight.
 */
export class SoakReceiver {
  readonly attempts: Attempt[] = []
  readonly overlaps: { hook: string; first: string; second: string; at: number }[] = []
  private readonly secrets = new Map<string, string[]>()
  private readonly inFlight = new Map<string, Attempt>()
  private readonly acked = new Set<string>()
  private readonly refusals = new Map<string, number>()
  private readonly sockets = new Set<Socket>()
  /** What the application handled, per webhook: event id -> times (exactly once is the goal). */
  readonly handled = new Map<string, Map<string, number>>()
  /** Per webhook: events the kit recognised as handled already and skipped (re-deliveries absorbed). */
  readonly absorbed = new Map<string, number>()
  private readonly kits = new Map<string, WebhookReceiver>()
  /** Per delivery id: the event at which the application fails this attempt, and how. */
  private readonly failures = new Map<string, { at: string; how: '500' | '429' }>()
  private redis: Redis | null = null
  /** Called right after a 2xx went out (chaos uses it to kill the sender in its bookkeeping window). */
  onAck: ((attempt: Attempt) => void) | null = null
  private server!: Server
  private seq = 0
  origin = ''

  constructor(private readonly options: ReceiverOptions) {}

  async start(): Promise<this> {
    if (this.options.redis) this.redis = new Redis(this.options.redis.url)
    // A sender that dies mid-body makes the request stream fail: that attempt is `interrupted`.
    this.server = createServer((req, res) => void this.handle(req, res).catch(() => res.destroy()))
    this.server.keepAliveTimeout = 5_000
    this.server.on('connection', (socket) => {
      this.sockets.add(socket)
      socket.on('close', () => this.sockets.delete(socket))
    })
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
    return this
  }

  url(hook: string): string {
    return `${this.origin}/hook/${hook}`
  }

  /** Secrets a hook's signatures may verify with (after a rotation: the new one and the old one). */
  addSecret(hook: string, secret: string): void {
    this.secrets.set(hook, [...(this.secrets.get(hook) ?? []), secret])
  }

  /** Whether the receiver refuses every attempt of this delivery id (stable across processes). */
  doomed(deliveryId: string): boolean {
    return createHash('sha256').update(deliveryId).digest().readUInt32BE(0) / 2 ** 32 < this.options.doomRate
  }

  /** Time of the latest arrival (for the drain: "quiet for a while"). */
  lastArrival(): number {
    return this.attempts.at(-1)?.arrivedAt ?? 0
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const hook = /^\/hook\/([A-Za-z0-9_-]+)$/.exec(req.url ?? '')?.[1]
    if (req.method !== 'POST' || !hook) return void res.writeHead(404).end()
    const deliveryId = String(req.headers['webhook-id'] ?? '')
    const attempt: Attempt = {
      hook,
      deliveryId,
      events: [],
      arrivedAt: Date.now(),
      seq: this.seq++,
      acked: false,
      verified: false,
      overlapped: false,
    }
    const other = this.inFlight.get(hook)
    if (other) {
      attempt.overlapped = true
      this.overlaps.push({ hook, first: other.deliveryId, second: deliveryId, at: attempt.arrivedAt })
    }
    this.inFlight.set(hook, attempt)
    this.attempts.push(attempt)
    let settled = false
    const settle = (answer: Answer) => {
      if (settled) return false
      settled = true
      attempt.answer = answer
      if (this.inFlight.get(hook) === attempt) this.inFlight.delete(hook)
      return true
    }
    // The sender died or gave up before an answer.
    res.on('close', () => settle('interrupted'))

    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks).toString('utf8')
    attempt.verified = this.verify(hook, body, req)
    let events: Event[] = []
    try {
      events = JSON.parse(body).events as Event[]
      attempt.events = events.map((e) => ({
        id: e.id,
        type: e.type,
        ...(e.type === 'webhook.rate_limited' ? { data: e.data } : {}),
      }))
    } catch {
      attempt.events = []
    }

    let answer = this.decide(deliveryId)
    if (answer === 'slow-ok') await sleep(1_500 + Math.random() * 1_000)
    if (settled) return
    const doomed = this.doomed(deliveryId) && !this.acked.has(deliveryId)
    if (doomed && answer === 'reset') return this.reset(req, deliveryId, settle)
    if (doomed) return this.refuse(res, deliveryId, settle)

    // Through the kit: a planned failure makes the application throw (or push back) at one event.
    if ((answer === '500' || answer === '429') && events.length) {
      this.failures.set(deliveryId, { at: events[Math.floor(Math.random() * events.length)].id, how: answer })
    }
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]))
    const kit = await this.kit(hook).receive({ body, headers })
    this.failures.delete(deliveryId)
    if (kit.status === 200)
      this.absorbed.set(hook, (this.absorbed.get(hook) ?? 0) + (JSON.parse(kit.body).skipped as number))
    if (settled) return
    // Handled (or skipped as already handled), then the connection dies: the sender retries.
    if (answer === 'reset') return this.reset(req, deliveryId, settle)
    answer = kit.status < 300 ? (answer === 'slow-ok' ? 'slow-ok' : 'ok') : kit.status === 429 ? '429' : '500'
    settle(answer)
    res.writeHead(kit.status, kit.headers).end(kit.body)
    if (kit.status < 300) {
      attempt.acked = true
      this.acked.add(deliveryId)
      this.onAck?.(attempt)
    } else this.refusals.set(deliveryId, (this.refusals.get(deliveryId) ?? 0) + 1)
  }

  private reset(req: IncomingMessage, deliveryId: string, settle: (answer: Answer) => boolean): void {
    settle('reset')
    this.refusals.set(deliveryId, (this.refusals.get(deliveryId) ?? 0) + 1)
    req.socket.destroy()
  }

  private refuse(res: ServerResponse, deliveryId: string, settle: (answer: Answer) => boolean): void {
    settle('500')
    res.writeHead(500).end('soak says no')
    this.refusals.set(deliveryId, (this.refusals.get(deliveryId) ?? 0) + 1)
  }

  /** The kit for one webhook path, its application counting what it handles. */
  private kit(hook: string): WebhookReceiver {
    let kit = this.kits.get(hook)
    if (kit) return kit
    const counts = new Map<string, number>()
    this.handled.set(hook, counts)
    const store = this.redis
      ? new RedisStore({ redis: this.redis, prefix: `${this.options.redis!.prefix}${hook}:` })
      : new MemoryStore()
    kit = createReceiver({
      secrets: () => this.secrets.get(hook) ?? [],
      store,
      onEvent: (event, { deliveryId }) => {
        const failure = this.failures.get(deliveryId)
        if (failure?.at === event.id)
          throw failure.how === '429' ? retryLater(1, 429) : new Error('soak application fails')
        counts.set(event.id, (counts.get(event.id) ?? 0) + 1)
      },
      onError: () => undefined,
    })
    this.kits.set(hook, kit)
    return kit
  }

  private decide(deliveryId: string): Answer {
    if (this.acked.has(deliveryId)) return 'ok'
    if (this.doomed(deliveryId)) return Math.random() < 0.5 ? '500' : 'reset'
    if ((this.refusals.get(deliveryId) ?? 0) >= (this.options.maxRefusals ?? 3)) return 'ok'
    const r = Math.random()
    if (r < 0.65) return 'ok'
    if (r < 0.75) return 'slow-ok'
    if (r < 0.85) return '500'
    if (r < 0.93) return '429'
    return 'reset'
  }

  private verify(hook: string, body: string, req: IncomingMessage): boolean {
    const secrets = this.secrets.get(hook) ?? []
    try {
      return secrets.length > 0 && (verify(body, req.headers, secrets), true)
    } catch {
      return false
    }
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
    this.redis?.disconnect()
  }
}
