import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as oidc from 'openid-client'
import { freePort, runServerOnFreePortUntilExit, startServer } from '../support/server'
import { startTestProvider, TEST_CLIENT_ID, type TestProvider } from '../support/oidc-provider'
import { OidcSettingError, parseOidcSettings } from '../../server/auth/oidc/settings'
import { isOutage } from '../../server/auth/oidc/client'

/**
 * A misconfigured OIDC_ISSUER stops the start with a message naming the setting; a provider that
 * does not answer (an outage) does not: the rest of the service runs, and sign-in through the
 * provider works once it answers.
 */

let idp: TestProvider
beforeAll(async () => {
  idp = await startTestProvider(['http://127.0.0.1:1/auth/callback'])
})
afterAll(async () => idp?.close())

describe('OIDC settings', () => {
  it('is off without OIDC_ISSUER and applies the contract defaults with it', () => {
    expect(parseOidcSettings({})).toBeNull()
    expect(parseOidcSettings({ OIDC_ISSUER: 'https://idp.example.com', OIDC_CLIENT_ID: 'fw' })).toMatchObject({
      clientId: 'fw',
      clientSecret: null,
      userClaim: 'preferred_username',
      groupsClaim: 'groups',
      namespace: 'default',
    })
  })

  it('accepts http only on loopback', () => {
    for (const issuer of ['http://127.0.0.1:8080', 'http://localhost:9000/realm', 'http://[::1]:8080'])
      expect(parseOidcSettings({ OIDC_ISSUER: issuer, OIDC_CLIENT_ID: 'fw' })?.issuer.href).toContain(issuer)
    for (const issuer of ['http://idp.example.com', 'http://10.0.0.5', 'ftp://127.0.0.1', 'not a url'])
      expect(() => parseOidcSettings({ OIDC_ISSUER: issuer, OIDC_CLIENT_ID: 'fw' })).toThrow(/OIDC_ISSUER/)
  })

  it('needs OIDC_NAMESPACE to be a namespace id', () => {
    const base = { OIDC_ISSUER: 'https://idp.example.com', OIDC_CLIENT_ID: 'fw' }
    expect(parseOidcSettings({ ...base, OIDC_NAMESPACE: 'acme' })?.namespace).toBe('acme')
    for (const bad of ['a/b', 'has space', '-lead', '../x'])
      expect(() => parseOidcSettings({ ...base, OIDC_NAMESPACE: bad })).toThrow(/OIDC_NAMESPACE/)
  })

  it('needs a client id', () => {
    expect(() => parseOidcSettings({ OIDC_ISSUER: 'https://idp.example.com' })).toThrow(OidcSettingError)
    expect(() => parseOidcSettings({ OIDC_ISSUER: 'https://idp.example.com' })).toThrow(/OIDC_CLIENT_ID/)
  })
})

describe('start-up with a misconfigured issuer', () => {
  const start = async (issuer: string) =>
    runServerOnFreePortUntilExit({ OIDC_ISSUER: issuer, OIDC_CLIENT_ID: TEST_CLIENT_ID, LOG_LEVEL: 'info' })

  it('refuses an issuer whose discovery document is not there (a wrong path on a real provider)', async () => {
    const exited = await start(`${idp.issuer}/wrong-realm`)
    expect(exited.code).not.toBe(0)
    expect(exited.output).toMatch(/OIDC_ISSUER: discovery of \\"http:\/\/127\.0\.0\.1:\d+\/wrong-realm\\" failed/)
  })

  it('refuses a provider whose discovery document names another issuer', async () => {
    // Same provider, reached as localhost: its metadata says 127.0.0.1, which must not be accepted.
    const exited = await start(idp.issuer.replace('127.0.0.1', 'localhost'))
    expect(exited.code).not.toBe(0)
    expect(exited.output).toMatch(/OIDC_ISSUER: discovery of \\"http:\/\/localhost:\d+\/\\" failed \([^)]*issuer/)
  })

  it('refuses plain http to a host that is not loopback, before any connection', async () => {
    const exited = await start('http://idp.example.com')
    expect(exited.code).not.toBe(0)
    expect(exited.output).toMatch(/OIDC_ISSUER must be an https:\/\/ URL/)
  })
})

describe('start-up while the provider does not answer', () => {
  it('serves without it, refuses sign-in through it with a 503, and signs in through it once it answers', async () => {
    const idpPort = await freePort()
    const server = await startServer({ OIDC_ISSUER: `http://127.0.0.1:${idpPort}`, OIDC_CLIENT_ID: TEST_CLIENT_ID })
    try {
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
      // Token sign-in stays: the page still offers it.
      expect(await (await fetch(`${server.url}/sign-in`)).text()).toContain('Access token')
      const down = await fetch(`${server.url}/auth/sign-in`, { redirect: 'manual' })
      expect(down.status).toBe(503)
      expect(await down.text()).toContain('cannot be reached now')
      expect(server.output()).toMatch(/OIDC_ISSUER: discovery of [^\n]* failed [^\n]*tries again/)
      const late = await startTestProvider([`${server.url}/auth/callback`], { port: idpPort })
      try {
        // Discovered at a sign-in a second after the last try, or by the background retry.
        const signIn = () => fetch(`${server.url}/auth/sign-in`, { redirect: 'manual' })
        await expect.poll(async () => (await signIn()).status, { timeout: 10_000, interval: 100 }).toBe(303)
        const up = await signIn()
        expect(up.status).toBe(303)
        expect(up.headers.get('location')).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${idpPort}/`))
      } finally {
        await late.close()
      }
    } finally {
      await server.stop()
    }
  }, 30_000)
})

describe('sign-in clicks while the provider is down', () => {
  it('try discovery at most once a second, however many come', async () => {
    let discoveries = 0
    // A provider that answers 503 at once: every try costs it a request.
    const refusing = createServer((_req, res) => {
      discoveries++
      res.statusCode = 503
      res.end()
    })
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve))
    const issuer = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`
    const server = await startServer({ OIDC_ISSUER: issuer, OIDC_CLIENT_ID: TEST_CLIENT_ID })
    try {
      const before = discoveries
      const started = performance.now()
      for (let i = 0; i < 30; i++) {
        const click = await fetch(`${server.url}/auth/sign-in`, { redirect: 'manual' })
        expect(click.status).toBe(503)
      }
      const seconds = (performance.now() - started) / 1000
      // One per second of clicking (plus one begun just before), and the background retry's.
      expect(discoveries - before).toBeLessThanOrEqual(Math.ceil(seconds) + 2)
    } finally {
      await server.stop()
      await new Promise<void>((resolve) => refusing.close(() => resolve()))
    }
  }, 30_000)
})

describe('an outage, told from a wrong issuer', () => {
  let stub: Server
  let base: string
  beforeAll(async () => {
    // Answers every path with the status its first segment names.
    stub = createServer((req, res) => {
      res.statusCode = Number(req.url?.split('/')[1]) || 200
      res.setHeader('content-type', 'application/json')
      res.end('{}')
    })
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((resolve) => stub.close(() => resolve())))

  const failure = async (issuer: string) =>
    oidc
      .discovery(new URL(issuer), TEST_CLIENT_ID, undefined, oidc.None(), {
        execute: [oidc.allowInsecureRequests],
        timeout: 5,
      })
      .then(
        () => expect.unreachable('discovery succeeded'),
        (error: unknown) => error,
      )

  it('is an outage when nobody answers, or the provider answers 5xx or 429', async () => {
    expect(isOutage(await failure(`http://127.0.0.1:${await freePort()}`))).toBe(true)
    expect(isOutage(await failure(`${base}/503`))).toBe(true)
    expect(isOutage(await failure(`${base}/502`))).toBe(true)
    expect(isOutage(await failure(`${base}/429`))).toBe(true)
  })

  it('is a wrong issuer when the provider answers anything else', async () => {
    expect(isOutage(await failure(`${base}/404`))).toBe(false)
    expect(isOutage(await failure(`${base}/401`))).toBe(false)
    // 200 with a document that is not a provider's.
    expect(isOutage(await failure(`${base}/200`))).toBe(false)
  })
})
