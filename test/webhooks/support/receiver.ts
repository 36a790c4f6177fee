import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import Ajv2020 from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { Webhook } from 'standardwebhooks'

/** One request the receiver got, with the verdicts of both checks. */
export interface Receipt {
  /** Test-clock time of arrival. */
  at: number
  headers: IncomingHttpHeaders
  body: string
  json: {
    version: number
    events: { id: string; type: string; time: string; namespace: string; data: Record<string, any> }[]
  }
  /** Secrets (by index in `secrets`) whose signature verified with `standardwebhooks`. */
  verifiedWith: number[]
  schemaErrors: string[]
}

export interface Reply {
  status?: number
  headers?: Record<string, string>
  body?: string
  /** Never answer (the sender's timeout must fire). */
  hang?: boolean
  /** Answer only after this many (real) milliseconds. */
  delayMs?: number
}

/**
 * A real webhook receiver on 127.0.0.1: verifies every delivery with the `standardwebhooks`
 * library against each of `secrets` (timestamp tolerance judged on the test clock) and validates
 * every body with ajv against the served JSON Schema. Replies come from `reply` (default 200).
 */
export class Receiver {
  readonly receipts: Receipt[] = []
  secrets: string[] = []
  reply: (receipt: Receipt, index: number) => Reply = () => ({ status: 200 })
  /** Requests that arrived while another was still open (each receiver serves one webhook). */
  overlaps = 0
  /** Requests open now: arrived, not yet answered or closed by the sender. */
  open = 0
  url = ''
  private server!: Server
  private readonly sockets = new Set<Socket>()
  private validate!: ReturnType<Ajv2020['compile']>

  constructor(private readonly now: () => number = Date.now) {}

  /** Starts listening; `schema` is the document served at /schemas/webhook-events-v1.json. */
  async start(schema: object): Promise<this> {
    const ajv = new Ajv2020({ allErrors: true, strict: false })
    addFormats(ajv)
    this.validate = ajv.compile(schema)
    this.server = createServer((req, res) => {
      if (++this.open > 1) this.overlaps++
      res.once('close', () => this.open--)
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8')
        const receipt: Receipt = {
          at: this.now(),
          headers: req.headers,
          body,
          json: safeJson(body),
          verifiedWith: this.verify(body, req.headers),
          schemaErrors: [],
        }
        if (!this.validate(receipt.json))
          receipt.schemaErrors = (this.validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`)
        this.receipts.push(receipt)
        const reply = this.reply(receipt, this.receipts.length - 1)
        if (reply.hang) return
        const answer = () => {
          res.writeHead(reply.status ?? 200, reply.headers ?? {})
          res.end(reply.body ?? 'ok')
        }
        if (reply.delayMs) setTimeout(answer, reply.delayMs)
        else answer()
      })
    })
    this.server.on('connection', (socket) => {
      this.sockets.add(socket)
      socket.on('close', () => this.sockets.delete(socket))
    })
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`
    return this
  }

  private verify(body: string, headers: IncomingHttpHeaders): number[] {
    const plain = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)]))
    return this.secrets.flatMap((secret, index) => {
      const webhook = new Webhook(secret)
      // The library checks the timestamp against Date.now(); judge it on the test clock instead.
      ;(webhook as unknown as { verifyTimestamp: (h: string) => Date }).verifyTimestamp = (header) => {
        const seconds = Number.parseInt(header, 10)
        if (Math.abs(this.now() / 1000 - seconds) > 300) throw new Error('timestamp outside tolerance')
        return new Date(seconds * 1000)
      }
      try {
        webhook.verify(body, plain)
        return [index]
      } catch {
        return []
      }
    })
  }

  /** Every event received, in arrival order, duplicates included. */
  events() {
    return this.receipts.flatMap((receipt) => receipt.json.events)
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

function safeJson(body: string) {
  try {
    return JSON.parse(body)
  } catch {
    return { version: 0, events: [] }
  }
}
