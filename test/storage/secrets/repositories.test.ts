import { randomBytes } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BACKEND_KINDS, makeBackend } from '../../support/backends'
import type { Backend } from '../../../storage'
import { FirewallRepository } from '../../../storage/repositories/firewalls'
import { WebhookRepository } from '../../../storage/repositories/webhooks'
import { keys } from '../../../storage/repositories/keys'
import { parseSecretKey, seal, type SecretKey } from '../../../storage/secrets/cipher'
import { SecretBox } from '../../../storage/secrets/secret-box'
import { KEY_CHECK_KEY, SecretsKeyError, verifySecretsKey } from '../../../storage/secrets/key-check'
import { rotateSecretsKey } from '../../../storage/secrets/rotate'
import type { Firewall } from '../../../server/firewall/schema'
import type { WebhookRecord } from '../../../server/webhooks/configuration/model'

const newKey = (): SecretKey => parseSecretKey(randomBytes(32).toString('base64'), 'SECRETS_KEY')

const PLANTED = {
  username: 'planted-user-7f3a',
  password: 'planted-password-2c9e',
  token: 'planted-token-5b1d',
  artifact: 'planted-artifact-8e4f',
  secret: 'whsec_cGxhbnRlZC13ZWJob29rLXNlY3JldC0xMjM0NTY3OA==',
  previous: 'whsec_cGxhbnRlZC1wcmV2aW91cy1zZWNyZXQtODc2NTQzMjE=',
  header: 'planted-header-value-4d2a',
}

const firewall = (id: string): Firewall => ({
  id,
  version: 0,
  ecosystem: 'npm',
  name: id,
  description: '',
  upstreams: [
    {
      id: 'npmjs',
      endpoint: 'https://registry.example',
      credentials: { username: PLANTED.username, password: PLANTED.password },
      internal: false,
      cached: false,
    },
    {
      id: 'mirror',
      endpoint: 'https://mirror.example',
      credentials: { token: PLANTED.token },
      artifactCredentials: [{ host: 'cdn.example', credentials: { token: PLANTED.artifact } }],
      internal: false,
      cached: false,
    },
  ],
  rules: [],
  exceptions: [],
  permissions: {},
  extends: [],
  updatedAt: '',
})

const webhook = (id: string): WebhookRecord => ({
  id,
  namespace: 'ns',
  name: id,
  url: 'https://hooks.example/x',
  enabled: true,
  eventTypes: ['config.*'],
  firewalls: [],
  secret: PLANTED.secret,
  previousSecret: PLANTED.previous,
  previousSecretValidUntil: '2999-01-01T00:00:00.000Z',
  createdAt: 't',
  updatedAt: 't',
  headers: { 'X-Api-Key': PLANTED.header },
})

/** Every stored value of the backend as one JSON text (the repositories' keys: plain JSON values). */
async function everything(backend: Backend): Promise<string> {
  const keys = await backend.keyValue.keys('')
  return JSON.stringify(await backend.keyValue.getMany(keys))
}

function expectNoPlaintext(stored: string) {
  for (const value of Object.values(PLANTED)) {
    expect(stored).not.toContain(value)
    expect(stored).not.toContain(Buffer.from(value).toString('base64'))
  }
}

describe.each(BACKEND_KINDS)('secrets at rest in the repositories (%s)', (kind) => {
  let backend: Backend
  beforeEach(async () => {
    backend = await makeBackend(kind)
  })
  afterEach(async () => {
    await backend.close()
  })

  const putFirewall = (repo: FirewallRepository, id = 'fw') =>
    repo.mutate('ns', id, {}, 'now', (current) => ({ next: current ?? firewall(id), summary: 'put', result: (s) => s }))
  const putWebhook = (repo: WebhookRepository, id = 'wh') =>
    repo.mutate('ns', id, () => ({ next: webhook(id), result: null }))

  it('stores sealed credentials and secrets, history included, and reads them back in plaintext', async () => {
    const box = new SecretBox(newKey())
    const firewalls = new FirewallRepository(backend, box)
    const webhooks = new WebhookRepository(backend, box)
    expect((await putFirewall(firewalls))!.upstreams[0].credentials).toEqual({
      username: PLANTED.username,
      password: PLANTED.password,
    })
    await firewalls.mutate('ns', 'fw', {}, 'now', (current) => ({
      next: { ...current!, description: 'two' },
      summary: 'edit',
      result: (s) => s,
    }))
    await putWebhook(webhooks)
    expectNoPlaintext(await everything(backend))
    expect(await everything(backend)).toContain(`enc:v1:${box.current!.id}:`)

    const reader = new FirewallRepository(backend, box)
    expect((await reader.get('ns', 'fw'))!.upstreams).toEqual(firewall('fw').upstreams)
    expect((await reader.list('ns'))[0].upstreams).toEqual(firewall('fw').upstreams)
    for (const entry of await reader.history('ns', 'fw', 2, 10))
      expect(entry.config.upstreams).toEqual(firewall('fw').upstreams)
    expect((await reader.getVersion('ns', 'fw', 1))!.config.upstreams).toEqual(firewall('fw').upstreams)
    const hook = await new WebhookRepository(backend, box).get('ns', 'wh')
    expect([hook!.secret, hook!.previousSecret]).toEqual([PLANTED.secret, PLANTED.previous])
    expect(hook!.headers).toEqual({ 'X-Api-Key': PLANTED.header })
    expect((await webhooks.list('ns'))[0].secret).toBe(PLANTED.secret)
    expect((await webhooks.getMany(['ns/wh']))[0]!.previousSecret).toBe(PLANTED.previous)
  })

  it('a sealed value moved to another record or field does not open', async () => {
    const box = new SecretBox(newKey())
    const firewalls = new FirewallRepository(backend, box)
    await putFirewall(firewalls, 'a')
    await putFirewall(firewalls, 'b')
    const a = (await backend.keyValue.get<Firewall>(keys.firewall('ns', 'a')))!
    const b = (await backend.keyValue.get<Firewall>(keys.firewall('ns', 'b')))!
    // The attacker with storage access copies a's sealed password over b's, and over b's username.
    b.upstreams[0].credentials = {
      username: (a.upstreams[0].credentials as any).password,
      password: (a.upstreams[0].credentials as any).password,
    }
    await backend.keyValue.set(keys.firewall('ns', 'b'), b)
    await expect(new FirewallRepository(backend, box).get('ns', 'b')).rejects.toThrow(/moved from another record/)
  })

  it('without SECRETS_KEY nothing changes: values are stored as given', async () => {
    const firewalls = new FirewallRepository(backend, new SecretBox())
    await putFirewall(firewalls)
    expect(await everything(backend)).toContain(PLANTED.password)
    await verifySecretsKey(backend, new SecretBox())
    expect(await backend.keyValue.get(KEY_CHECK_KEY)).toBeNull()
  })

  it('the key check: written once, refuses a wrong or a missing key by name, accepts the previous key', async () => {
    const first = newKey()
    await verifySecretsKey(backend, new SecretBox(first))
    await verifySecretsKey(backend, new SecretBox(first))
    const wrong = verifySecretsKey(backend, new SecretBox(newKey()))
    await expect(wrong).rejects.toBeInstanceOf(SecretsKeyError)
    await expect(verifySecretsKey(backend, new SecretBox(newKey()))).rejects.toThrow(
      /^SECRETS_KEY cannot decrypt the stored secrets \(written with key id/,
    )
    await expect(verifySecretsKey(backend, new SecretBox())).rejects.toThrow(
      /SECRETS_KEY is not set, but the stored secrets are encrypted/,
    )
    const next = newKey()
    await verifySecretsKey(backend, new SecretBox(next, first))
    // Values of both keys may now be stored: the new key alone is refused until a rotation.
    await expect(verifySecretsKey(backend, new SecretBox(next))).rejects.toThrow(/cannot decrypt.*rotate-secrets-key/)
  })

  it('rotation seals plaintext and old-key values with the new key; then the new key alone starts', async () => {
    const old = newKey()
    // Written before any key was set, then with the old key (the session secret too), then the key changes.
    await putFirewall(new FirewallRepository(backend, new SecretBox()), 'legacy')
    await putWebhook(new WebhookRepository(backend, new SecretBox()), 'legacy')
    await verifySecretsKey(backend, new SecretBox(old))
    const oldBox = new SecretBox(old)
    await putFirewall(new FirewallRepository(backend, oldBox), 'fw')
    await putWebhook(new WebhookRepository(backend, oldBox), 'wh')
    const session = seal(old, 'session-secret-hex', JSON.stringify(['dashboard', 'session-secret']))
    await backend.keyValue.transact([], () => ({
      writes: { set: { 'dashboard:session-secret': session } },
      result: null,
    }))

    const next = newKey()
    const rotating = new SecretBox(next, old)
    const result = await rotateSecretsKey(backend, rotating)
    // 2 firewalls x (doc + 1 version) x 4 credentials, 2 webhooks x (2 secrets + 1 header value), the session secret.
    expect(result).toEqual({ secrets: 16 + 6 + 1, records: 4 + 2 + 1, keyId: next.id })
    expect((await rotateSecretsKey(backend, rotating)).secrets).toBe(0)

    const stored = await everything(backend)
    expectNoPlaintext(stored)
    expect(stored).not.toContain(`enc:v1:${old.id}:`)
    const box = new SecretBox(next)
    await verifySecretsKey(backend, box)
    await expect(verifySecretsKey(backend, new SecretBox(old))).rejects.toBeInstanceOf(SecretsKeyError)
    for (const id of ['legacy', 'fw']) {
      expect((await new FirewallRepository(backend, box).get('ns', id))!.upstreams).toEqual(firewall(id).upstreams)
      expect((await new FirewallRepository(backend, box).getVersion('ns', id, 1))!.config.upstreams).toEqual(
        firewall(id).upstreams,
      )
      const hook = await new WebhookRepository(backend, box).get('ns', id === 'fw' ? 'wh' : id)
      expect([hook!.secret, hook!.headers!['X-Api-Key']]).toEqual([PLANTED.secret, PLANTED.header])
    }
    // A process started with a later key writes with it: the check still opens, yet `next` alone is refused.
    const later = newKey()
    await verifySecretsKey(backend, new SecretBox(later, next))
    await expect(verifySecretsKey(backend, box)).rejects.toThrow(
      new RegExp(`key id ${later.id}, which neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS is.*rotate-secrets-key`),
    )
  })

  it('rotation without SECRETS_KEY is refused by name', async () => {
    await expect(rotateSecretsKey(backend, new SecretBox())).rejects.toThrow(/rotate-secrets-key needs SECRETS_KEY/)
  })
})
