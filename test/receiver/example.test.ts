import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { apiClient, freePort, startServer, type RunningServer } from '../support/server'
import { waitFor } from '../webhooks/support/built-server'

/** The README's transcript: `examples/receiver.ts` as `npm run example:receiver` starts it, receiving a test send. */

const token = `fwp_${randomBytes(30).toString('hex').slice(0, 43)}`
let server: RunningServer | undefined
let example: ChildProcess | undefined

afterAll(async () => {
  if (example && example.exitCode === null && example.signalCode === null) example.kill('SIGTERM')
  await server?.stop()
})

/** Collects a child's stdout; `printed(text)` resolves once the output holds `text`. */
function watch(child: ChildProcess) {
  let output = ''
  const waiting: { text: string; resolve: () => void }[] = []
  const check = () => {
    for (const w of waiting.filter((w) => output.includes(w.text))) {
      waiting.splice(waiting.indexOf(w), 1)
      w.resolve()
    }
  }
  child.stdout!.on('data', (chunk) => ((output += chunk), check()))
  child.stderr!.on('data', (chunk) => (output += chunk))
  return {
    output: () => output,
    printed: (text: string, timeoutMs = 30_000) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`"${text}" not printed; output:\n${output}`)), timeoutMs)
        waiting.push({ text, resolve: () => (clearTimeout(timer), resolve()) })
        child.once('exit', (code) => reject(new Error(`example exited (${code}):\n${output}`)))
        check()
      }),
  }
}

describe('examples/receiver.ts', () => {
  it('receives a test send and prints it, as the README shows', async () => {
    server = await startServer({ BOOTSTRAP_TOKEN: token, WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' })
    const api = apiClient(server.url, token)
    const port = await freePort()
    const created = await api('POST', '/v1/default/webhooks', {
      name: 'example',
      url: `http://127.0.0.1:${port}/`,
      eventTypes: ['firewall.*'],
    })
    expect(created.status).toBe(201)
    const { id, secret } = created.body as { id: string; secret: string }
    // Dedupe in memory: no REDIS_URL, whatever the test process carries.
    const { REDIS_URL: _ignored, ...env } = process.env
    example = spawn(process.execPath, ['--import', 'tsx', 'examples/receiver.ts'], {
      env: { ...env, WEBHOOK_SECRET: secret, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const out = watch(example)
    await out.printed(`receiving webhooks on http://localhost:${port}/`)
    const sent = await api('POST', `/v1/default/webhooks/${id}/test`)
    expect(sent.status).toBe(202)
    const event = (sent.body as { event: string }).event
    await out.printed(`test event ${event} for webhook ${id}`)
    // The record is written once the receiver's 200 is in, just after it printed.
    const records = async () =>
      (await api('GET', `/v1/default/webhooks/${id}/deliveries`)).body as { status: string; test: boolean }[]
    await waitFor(async () => (await records())[0]?.status === 'success', 10_000, 'the delivery recorded')
    expect(await records()).toMatchObject([{ status: 'success', test: true }])
  })
})
