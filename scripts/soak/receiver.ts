import { createHash } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { Webhook } from 'standardwebhooks'

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
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * One HTTP server, one path per webhook (`/hook/<name>`). Answers at random: mostly 2xx, some
 * 500, some 429 with `Retry-After: 1`, some after ~2 s, some by resetting the connection; once
 * a delivery id was accepted it is always accepted (an idempotent receiver). Records every
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
  /** Called right after a 2xx went out (chaos uses it to kill the sender in its bookkeeping window). */
  onAck: ((attempt: Attempt) => void) | null = null
  private server!: Server
  private seq = 0
  origin = ''

  constructor(private readonly options: ReceiverOptions) {}

  async start(): Promise<this> {
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
    const attempt: Attempt = { hook, deliveryId, events: [], arrivedAt: Date.now(), seq: this.seq++, acked: false, verified: false, overlapped: false }
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
    try {
      attempt.events = (JSON.parse(body).events as ReceivedEvent[]).map((e) => ({ id: e.id, type: e.type, ...(e.type.startsWith('webhook.') ? { data: e.data } : {}) }))
    } catch {
      attempt.events = []
    }

    const answer = this.decide(deliveryId)
    if (answer === 'slow-ok') await sleep(1_500 + Math.random() * 1_000)
    if (settled) return
    if (answer === 'reset') {
      settle('reset')
      this.refusals.set(deliveryId, (this.refusals.get(deliveryId) ?? 0) + 1)
      req.socket.destroy()
      return
    }
    settle(answer)
    if (answer === 'ok' || answer === 'slow-ok') {
      attempt.acked = true
      this.acked.add(deliveryId)
      res.writeHead(Math.random() < 0.5 ? 200 : 204).end()
      this.onAck?.(attempt)
    } else if (answer === '429') {
      res.writeHead(429, { 'retry-after': '1' }).end('slow down')
    } else {
      res.writeHead(500).end('soak says no')
    }
    if (!attempt.acked) this.refusals.set(deliveryId, (this.refusals.get(deliveryId) ?? 0) + 1)
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
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]))
    return (this.secrets.get(hook) ?? []).some((secret) => {
      try {
        new Webhook(secret).verify(body, headers)
        return true
      } catch {
        return false
      }
    })
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}
