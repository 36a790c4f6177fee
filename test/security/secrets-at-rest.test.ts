import { createHash, randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Redis from 'ioredis'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminCli } from '../support/admin'
import { uniquePrefix } from '../support/redis'
import { apiClient, startServer, type Api, type RunningServer } from '../support/server'

/**
 * Finding 8 (secrets at rest) and the fs-permissions point of finding 7, against the built
 * server on Redis and on fs: with SECRETS_KEY set no stored byte carries a credential or a
 * webhook secret, the service still uses them, a wrong key stops the start, and a key rotation
 * through the admin CLI leaves storage readable by the new key alone.
 */

const newKey = () => randomBytes(32).toString('base64')
const TOKEN = `fwp_${randomBytes(30).toString('hex').slice(0, 43)}`
const PLANTED = {
  username: `planted-user-${randomBytes(4).toString('hex')}`,
  password: `planted-password-${randomBytes(4).toString('hex')}`,
  token: `planted-token-${randomBytes(4).toString('hex')}`,
  artifact: `planted-artifact-${randomBytes(4).toString('hex')}`,
  /** Replaced at once: lives on only in the first history version. */
  firstPassword: `planted-first-password-${randomBytes(4).toString('hex')}`,
}
const TARBALL = Buffer.from('the tarball bytes of secret-pkg')

interface Seen {
  url: string
  headers: IncomingHttpHeaders
  body: string
}

/** A loopback HTTP server recording every request; `until` waits for one (woken by each arrival). */
async function listen(reply: (url: string) => { status: number; body?: string | Buffer }) {
  const seen: Seen[] = []
  const waiters: (() => void)[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
      const { status, body } = reply(req.url ?? '')
      res.writeHead(status, { 'content-type': 'application/json' }).end(body ?? '{}')
      waiters.splice(0).forEach((wake) => wake())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const until = async (test: () => boolean) => {
    while (!test()) await new Promise<void>((wake) => waiters.push(wake))
  }
  return {
    url,
    seen,
    until,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  }
}

/** Every value stored under a Redis prefix, all types, as one text. */
async function redisDump(url: string, prefix: string): Promise<{ keys: number; text: string }> {
  const redis = new Redis(url)
  try {
    const keys: string[] = []
    let cursor = '0'
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000)
      keys.push(...batch)
      cursor = next
    } while (cursor !== '0')
    const parts: string[] = []
    for (const key of keys) {
      const type = await redis.type(key)
      if (type === 'string') parts.push((await redis.getBuffer(key))!.toString('latin1'))
      else if (type === 'hash') parts.push(JSON.stringify(await redis.hgetall(key)))
      else if (type === 'list') parts.push(JSON.stringify(await redis.lrange(key, 0, -1)))
      else if (type === 'set') parts.push(JSON.stringify(await redis.smembers(key)))
      else if (type === 'zset') parts.push(JSON.stringify(await redis.zrange(key, 0, -1, 'WITHSCORES')))
      else if (type === 'stream') parts.push(JSON.stringify(await redis.xrange(key, '-', '+')))
      else throw new Error(`unexpected Redis type ${type} at ${key}`)
      parts.push(key)
    }
    return { keys: keys.length, text: parts.join('\n') }
  } finally {
    redis.disconnect()
  }
}

async function redisValue(url: string, key: string): Promise<string | null> {
  const redis = new Redis(url)
  try {
    return await redis.get(key)
  } finally {
    redis.disconnect()
  }
}

/** Every file and directory under `dir` (itself included); temp files renamed away meanwhile are skipped. */
function walk(dir: string): { files: string[]; dirs: string[] } {
  const out = { files: [] as string[], dirs: [dir] }
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.name.endsWith('.tmp')) continue
    if (entry.isDirectory()) {
      const inner = walk(path)
      out.files.push(...inner.files)
      out.dirs.push(...inner.dirs)
    } else out.files.push(path)
  }
  return out
}

function readIfPresent(file: string): string {
  try {
    return readFileSync(file).toString('latin1')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return ''
    throw error
  }
}

/** The permission bits, or null for a file the running service removed since it was listed. */
function mode(path: string): string | null {
  try {
    return (statSync(path).mode & 0o777).toString(8)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}

describe.each(['redis', 'fs'] as const)('secrets at rest (%s)', (kind) => {
  const keyA = newKey()
  const keyB = newKey()
  const prefix = uniquePrefix('secrets')
  // The service creates the data dir itself (a path that does not exist yet).
  const dataDir = join(mkdtempSync(join(tmpdir(), 'pf-secrets-')), 'data')
  const storageEnv = (): Record<string, string> =>
    kind === 'redis'
      ? { REDIS_URL: process.env.REDIS_URL!, REDIS_PREFIX: prefix, DATA_DIR: dataDir }
      : { DATA_DIR: dataDir }
  const env = (keys: Record<string, string>) => ({
    ...storageEnv(),
    ...keys,
    BOOTSTRAP_TOKEN: TOKEN,
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
    UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
    WEBHOOK_LEASE: '2s',
  })

  let server: RunningServer | null = null
  let api: Api
  let upstream: Awaited<ReturnType<typeof listen>>
  let receiver: Awaited<ReturnType<typeof listen>>
  let hookId = ''
  const hookSecrets: string[] = []

  /** Every planted secret in the forms storage could hold it: as is, base64, base64url, the Basic header. */
  const forbidden = () => {
    const values = [...Object.values(PLANTED), ...hookSecrets, ...hookSecrets.map((s) => s.slice('whsec_'.length))]
    return [
      ...values,
      ...values.flatMap((v) => [Buffer.from(v).toString('base64'), Buffer.from(v).toString('base64url')]),
      Buffer.from(`${PLANTED.username}:${PLANTED.password}`).toString('base64'),
    ]
  }

  async function storedText(): Promise<string> {
    if (kind === 'redis') {
      const dump = await redisDump(process.env.REDIS_URL!, prefix)
      expect(dump.keys).toBeGreaterThan(20)
      return dump.text
    }
    const { files } = walk(dataDir)
    expect(files.length).toBeGreaterThan(20)
    // The running service removes queue and log items as it works: a file listed a moment ago may be gone.
    return files.map((file) => readIfPresent(file)).join('\n')
  }

  const registry = () => `${server!.url}/registry/default/web`
  const proxied = (path: string) => fetch(`${registry()}/${path}`, { headers: { authorization: `Bearer ${TOKEN}` } })

  /** Sends a test event and returns the first delivery that arrives after now. */
  async function delivered(): Promise<Seen> {
    const before = receiver.seen.length
    expect((await api('POST', `/v1/default/webhooks/${hookId}/test`)).status).toBe(202)
    await receiver.until(() => receiver.seen.length > before)
    return receiver.seen[before]
  }
  const verifies = (secret: string, delivery: Seen) => {
    try {
      new Webhook(secret).verify(
        delivery.body,
        Object.fromEntries(Object.entries(delivery.headers).map(([k, v]) => [k, String(v)])),
      )
      return true
    } catch {
      return false
    }
  }

  /** The proxy resolves secret-pkg through both upstreams and downloads its tarball. */
  async function installThroughProxy(): Promise<void> {
    const before = upstream.seen.length
    const packument = await proxied('secret-pkg')
    expect(packument.status).toBe(200)
    const tarball = await proxied('secret-pkg/-/secret-pkg-1.0.0.tgz')
    expect(tarball.status).toBe(200)
    expect(Buffer.from(await tarball.arrayBuffer()).equals(TARBALL)).toBe(true)
    const auth = (prefix: string) =>
      upstream.seen
        .slice(before)
        .filter((r) => r.url.startsWith(prefix))
        .map((r) => r.headers.authorization)
    expect(auth('/basic/')).toContain(
      `Basic ${Buffer.from(`${PLANTED.username}:${PLANTED.password}`).toString('base64')}`,
    )
    expect(auth('/token/secret-pkg')).toContain(`Bearer ${PLANTED.token}`)
    expect(auth('/tarballs/')).toContain(`Bearer ${PLANTED.artifact}`)
  }

  beforeAll(async () => {
    receiver = await listen(() => ({ status: 200 }))
    upstream = await listen((url) => {
      if (url.startsWith('/tarballs/')) return { status: 200, body: TARBALL }
      if (!url.startsWith('/token/secret-pkg')) return { status: 404, body: '{"error":"not found"}' }
      const integrity = `sha512-${createHash('sha512').update(TARBALL).digest('base64')}`
      return {
        status: 200,
        body: JSON.stringify({
          name: 'secret-pkg',
          'dist-tags': { latest: '1.0.0' },
          versions: {
            '1.0.0': {
              name: 'secret-pkg',
              version: '1.0.0',
              dist: { tarball: `${upstream.url}/tarballs/secret-pkg-1.0.0.tgz`, integrity },
            },
          },
          time: { created: '2020-01-01T00:00:00.000Z', '1.0.0': '2020-01-01T00:00:00.000Z' },
        }),
      }
    })
    server = await startServer(env({ SECRETS_KEY: keyA }))
    api = apiClient(server.url, TOKEN)
    const put = await api('PUT', '/v1/default/config/web', {
      upstreams: [
        {
          id: 'basic',
          endpoint: `${upstream.url}/basic`,
          credentials: { username: PLANTED.username, password: PLANTED.firstPassword },
        },
        {
          id: 'token',
          endpoint: `${upstream.url}/token`,
          credentials: { token: PLANTED.token },
          artifactCredentials: [{ host: '127.0.0.1', credentials: { token: PLANTED.artifact } }],
        },
      ],
    })
    expect(put.status, JSON.stringify(put.body)).toBe(201)
    const creds = await api('PUT', '/v1/default/config/web/upstreams/basic/credentials', {
      username: PLANTED.username,
      password: PLANTED.password,
    })
    expect(creds.status, JSON.stringify(creds.body)).toBe(200)
    const hook = await api('POST', '/v1/default/webhooks', {
      name: 'ops',
      url: `${receiver.url}/hook`,
      eventTypes: ['config.*'],
    })
    expect(hook.status, JSON.stringify(hook.body)).toBe(201)
    hookId = hook.body.id
    hookSecrets.push(hook.body.secret)
    const rotated = await api('POST', `/v1/default/webhooks/${hookId}/secret/rotate`)
    expect(rotated.status).toBe(200)
    hookSecrets.push(rotated.body.secret)
  })

  afterAll(async () => {
    await server?.stop()
    await upstream?.close()
    await receiver?.close()
  })

  it('uses the credentials and signs with the rotated secret', async () => {
    // A dashboard page makes the service generate and store its session secret.
    expect((await fetch(`${server!.url}/sign-in`)).status).toBe(200)
    await installThroughProxy()
    const delivery = await delivered()
    expect(verifies(hookSecrets[1], delivery)).toBe(true)
    // The previous secret still signs during the overlap: both were stored, and both open.
    expect(verifies(hookSecrets[0], delivery)).toBe(true)
  })

  it('keeps no plaintext credential or webhook secret anywhere in storage', async () => {
    const text = await storedText()
    expect(text).toContain('enc:v1:')
    for (const secret of forbidden()) expect(text, 'a planted secret is stored in plain text').not.toContain(secret)
    const session =
      kind === 'redis'
        ? await redisValue(process.env.REDIS_URL!, `${prefix}:dashboard:session-secret`)
        : readFileSync(join(dataDir, 'dashboard', 'session-secret'), 'utf8')
    // Redis keeps transaction writes as JSON text, the fs driver keeps strings as they are.
    expect(session).toMatch(/^"?enc:v1:/)
  })

  it(
    kind === 'fs'
      ? 'writes data files 0600 in directories 0700, the data dir included'
      : 'writes nothing to the data dir',
    () => {
      if (kind === 'redis') return expect(existsSync(dataDir)).toBe(false)
      const { files, dirs } = walk(dataDir)
      expect(files.length).toBeGreaterThan(20)
      const loose = (paths: string[], expected: string) =>
        paths.filter((path) => ![expected, null].includes(mode(path)))
      expect(loose(dirs, '700').map((dir) => `${dir} ${mode(dir)}`)).toEqual([])
      expect(loose(files, '600').map((file) => `${file} ${mode(file)}`)).toEqual([])
    },
  )

  it('refuses to start with a wrong or malformed key, naming the setting and never a key', async () => {
    expect(await server!.stop()).toBe(0)
    server = null
    const keyX = newKey()
    for (const [keys, message] of [
      [{ SECRETS_KEY: keyX }, /SECRETS_KEY cannot decrypt the stored secrets/],
      [
        { SECRETS_KEY: keyB, SECRETS_KEY_PREVIOUS: keyX },
        /SECRETS_KEY \/ SECRETS_KEY_PREVIOUS cannot decrypt the stored secrets/,
      ],
      [{}, /SECRETS_KEY is not set, but the stored secrets are encrypted/],
      [{ SECRETS_KEY: randomBytes(16).toString('base64') }, /SECRETS_KEY must be 32 bytes in base64/],
    ] as const) {
      const failure = await startServer(env(keys)).then(
        () => null,
        (error: Error) => error.message,
      )
      expect(failure).toMatch(/^server exited early \(1\)/)
      expect(failure).toMatch(message)
      for (const key of [keyA, keyB, keyX]) expect(failure).not.toContain(key)
    }
  })

  it('rotates to a new key while the service runs; then starts with the new key alone', async () => {
    if (kind === 'fs') chmodSync(dataDir, 0o755)
    server = await startServer(env({ SECRETS_KEY: keyB, SECRETS_KEY_PREVIOUS: keyA }))
    api = apiClient(server.url, TOKEN)
    if (kind === 'fs') expect(mode(dataDir)).toBe('700')
    const count = await adminCli(server, 'rotate-secrets-key')
    // 2 history versions and the document, each with 4 credential values (the webhook may have been rewritten already).
    expect(Number(count)).toBeGreaterThanOrEqual(3 * 4)
    await installThroughProxy()
    expect(await server.stop()).toBe(0)

    server = await startServer(env({ SECRETS_KEY: keyB }))
    api = apiClient(server.url, TOKEN)
    const text = await storedText()
    const idOf = (key: string) =>
      createHash('sha256')
        .update('package-firewall secrets key id\0')
        .update(Buffer.from(key, 'base64'))
        .digest('base64url')
        .slice(0, 8)
    expect(text).toContain(`enc:v1:${idOf(keyB)}:`)
    expect(text).not.toContain(`enc:v1:${idOf(keyA)}:`)
    for (const secret of forbidden()) expect(text).not.toContain(secret)
    await installThroughProxy()
    expect((await api('GET', `/v1/default/webhooks/${hookId}/secret`)).body.secret).toBe(hookSecrets[1])
    const history = await api('GET', '/v1/default/config/web/history')
    expect(history.status).toBe(200)
    expect(verifies(hookSecrets[1], await delivered())).toBe(true)
  })
})
