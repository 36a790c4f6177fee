import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, runServerOnFreePortUntilExit } from '../support/server'
import { startTestProvider, TEST_CLIENT_ID, type TestProvider } from '../support/oidc-provider'
import { OidcSettingError, parseOidcSettings } from '../../server/auth/oidc/settings'

/** A misconfigured OIDC_ISSUER stops the start with a message naming the setting. */

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

  it('refuses an issuer nobody answers at', async () => {
    const exited = await start(`http://127.0.0.1:${await freePort()}`)
    expect(exited.code).not.toBe(0)
    expect(exited.output).toMatch(/OIDC_ISSUER: discovery of/)
  })

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
