import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, bootstrapToken, startServer, type Api, type RunningServer } from '../support/server'
import { createUser } from '../support/admin'
import { send, startLoopback, type Loopback } from '../support/loopback'

/**
 * Finding 4: stored upstream credentials belong to their endpoint. A user
 * with fw:update:config but not fw:update:credentials cannot point an upstream that holds a
 * secret somewhere else, by any route; a holder of fw:update:credentials must give the secret
 * again for a new endpoint; and the stored Authorization never reaches the attacker's server.
 */
const SECRET = 'legit-secret-5f0c1d'
const OLD_SECRET = 'older-secret-77aa02'

interface Seen {
  path: string
  authorization?: string
}

/** A registry on loopback that serves any package and records every request's Authorization. */
async function recordingRegistry(seen: Seen[]): Promise<Loopback> {
  let self = ''
  const registry = await startLoopback((req, res, url) => {
    seen.push({ path: url.pathname, authorization: req.headers.authorization })
    const name = decodeURIComponent(url.pathname.slice(1))
    send(
      res,
      200,
      JSON.stringify({
        name,
        'dist-tags': { latest: '1.0.0' },
        versions: { '1.0.0': { name, version: '1.0.0', dist: { tarball: `${self}/${name}/-/${name}-1.0.0.tgz` } } },
        time: { created: '2020-01-01T00:00:00.000Z', '1.0.0': '2020-01-01T00:00:00.000Z' },
      }),
      'application/json',
    )
  })
  self = registry.url
  return registry
}

describe('credentials follow their endpoint', () => {
  let server: RunningServer
  let legit: Loopback
  let attacker: Loopback
  const legitSeen: Seen[] = []
  const attackerSeen: Seen[] = []
  let owner: Api
  let mallory: Api
  let carol: Api
  let cloner: Api
  let devToken: string

  const read = async (fw: string) => (await owner('GET', `/v1/default/config/${fw}`)).body
  /** The firewall as read, with `edit` applied to its upstream list. */
  const edited = async (fw: string, edit: (upstreams: any[]) => any[]) => {
    const body = await read(fw)
    return { ...body, upstreams: edit(body.upstreams) }
  }
  /** The first upstream pointed at the attacker, everything else (its [REDACTED] credentials too) as read. */
  const toAttacker = (ups: any[]) => [{ ...ups[0], endpoint: attacker.url }, ...ups.slice(1)]
  const install = (fw: string, name: string) =>
    fetch(`${server.url}/registry/default/${fw}/${name}`, { headers: { authorization: `Bearer ${devToken}` } })
  /** Every Authorization value the attacker ever received, decoded where it is Basic. */
  const attackerAuthorizations = () =>
    attackerSeen
      .map((entry) => entry.authorization ?? '')
      .map((value) =>
        value.startsWith('Basic ') ? `${value} ${Buffer.from(value.slice(6), 'base64').toString()}` : value,
      )

  beforeAll(async () => {
    legit = await recordingRegistry(legitSeen)
    attacker = await recordingRegistry(attackerSeen)
    // Loopback upstreams are refused by default; this test runs its registries there.
    server = await startServer({ UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' })
    owner = apiClient(server.url, bootstrapToken(server))
    const names = ['mallory', 'carol', 'cloner', 'dev']
    const tokens = await Promise.all(names.map((name) => createUser(server, name)))
    ;[mallory, carol, cloner] = tokens.slice(0, 3).map((token) => apiClient(server.url, token))
    devToken = tokens[3]
    const permissions = {
      mallory: ['fw:read', 'fw:update:config'],
      carol: ['fw:read', 'fw:update:config', 'fw:update:credentials'],
      dev: ['fw:access'],
    }
    const create = async (fw: string, upstreams: unknown[], grants: Record<string, string[]> = permissions) => {
      const res = await owner('PUT', `/v1/default/config/${fw}`, { upstreams, permissions: grants })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
    }
    await create('fw', [{ id: 'main', endpoint: legit.url, credentials: { token: SECRET } }])
    await create('basic', [{ id: 'main', endpoint: legit.url, credentials: { username: 'ci', password: SECRET } }])
    await create('artifacts', [{ id: 'main', endpoint: legit.url }])
    const artifactPath = '/v1/default/config/artifacts/upstreams/main/artifact-credentials/cdn.legit.example'
    const artifact = await owner('PUT', artifactPath, { token: SECRET })
    expect(artifact.status).toBe(200)
    // Its first endpoint was another host (since taken over); the owner moved it and gave the secret again.
    await create('moved', [{ id: 'main', endpoint: attacker.url, credentials: { token: SECRET } }])
    const moved = [{ id: 'main', endpoint: legit.url, credentials: { token: SECRET } }]
    const move = await owner('PUT', '/v1/default/config/moved', { ...(await read('moved')), upstreams: moved })
    expect(move.status).toBe(200)
    // Two versions with different secrets at the same endpoint.
    await create('rotated', [{ id: 'main', endpoint: legit.url, credentials: { token: OLD_SECRET } }])
    expect(
      (await owner('PUT', '/v1/default/config/rotated/upstreams/main/credentials', { token: SECRET })).status,
    ).toBe(200)
    // A source whose grants the cloner holds: its clone gives the cloner fw:update:config, not credentials.
    await create('source', [{ id: 'main', endpoint: legit.url, credentials: { token: SECRET } }], {
      cloner: ['fw:clone', 'fw:read', 'fw:update:config'],
    })
    attackerSeen.length = 0
  }, 120_000)

  afterAll(async () => {
    await server?.stop()
    await legit?.close()
    await attacker?.close()
  })

  it('sends the stored Authorization to the legitimate endpoint (the baseline)', async () => {
    const res = await install('fw', 'left-pad')
    expect(res.status).toBe(200)
    expect(legitSeen.some((entry) => entry.authorization === `Bearer ${SECRET}`)).toBe(true)
  })

  it('refuses an endpoint change with [REDACTED] credentials without fw:update:credentials', async () => {
    const before = await read('fw')
    const res = await mallory('PUT', '/v1/default/config/fw', await edited('fw', toAttacker))
    expect(res.status).toBe(403)
    expect(res.body).toMatchObject({ code: 'permission_denied', permission: 'fw:update:credentials' })
    const after = await read('fw')
    expect(after.version).toBe(before.version)
    expect(after.upstreams[0].endpoint).toBe(legit.url)
    // End to end: the next install still goes to the legitimate registry only.
    expect((await install('fw', 'is-odd')).status).toBe(200)
    expect(attackerSeen).toEqual([])
    expect(legitSeen.at(-1)).toEqual({ path: '/is-odd', authorization: `Bearer ${SECRET}` })
  })

  it('refuses the same for Basic credentials', async () => {
    const res = await mallory('PUT', '/v1/default/config/basic', await edited('basic', toAttacker))
    expect(res.status).toBe(403)
    expect(res.body.permission).toBe('fw:update:credentials')
  })

  it('refuses re-using the upstream id for another endpoint and swapping upstream ids', async () => {
    const withMirror = (ups: any[]) => [...ups, { id: 'mirror', endpoint: attacker.url }]
    const added = await mallory('PUT', '/v1/default/config/fw', await edited('fw', withMirror))
    expect(added.status).toBe(200) // an upstream without secrets is plain configuration
    const reused = await mallory(
      'PUT',
      '/v1/default/config/fw',
      await edited('fw', (ups) => [
        { id: 'main', endpoint: attacker.url, credentials: { token: '[REDACTED]' }, internal: true },
        ups[1],
      ]),
    )
    expect(reused.status).toBe(403)
    expect(reused.body.permission).toBe('fw:update:credentials')
    const swapped = await mallory(
      'PUT',
      '/v1/default/config/fw',
      await edited('fw', (ups) => [
        { ...ups[0], endpoint: ups[1].endpoint },
        { ...ups[1], endpoint: ups[0].endpoint },
      ]),
    )
    expect(swapped.status).toBe(403)
    const renamed = await mallory(
      'PUT',
      '/v1/default/config/fw',
      await edited('fw', (ups) => [
        { ...ups[1], credentials: ups[0].credentials },
        { ...ups[0], id: 'old-main', credentials: undefined },
      ]),
    )
    expect(renamed.status).toBe(403)
    expect((await read('fw')).upstreams[0]).toMatchObject({ id: 'main', endpoint: legit.url })
  })

  it('refuses moving an artifact host token to another host or its upstream to another endpoint', async () => {
    const attackerHost = new URL(attacker.url).host
    const host = await mallory(
      'PUT',
      '/v1/default/config/artifacts',
      await edited('artifacts', (ups) => [
        { ...ups[0], artifactCredentials: [{ host: attackerHost, credentials: { token: '[REDACTED]' } }] },
      ]),
    )
    expect(host.status).toBe(403)
    expect(host.body.permission).toBe('fw:update:credentials')
    const endpoint = await mallory('PUT', '/v1/default/config/artifacts', await edited('artifacts', toAttacker))
    expect(endpoint.status).toBe(403)
    const byHolder = await carol(
      'PUT',
      '/v1/default/config/artifacts',
      await edited('artifacts', (ups) => [
        { ...ups[0], artifactCredentials: [{ host: attackerHost, credentials: { token: '[REDACTED]' } }] },
      ]),
    )
    expect(byHolder.status).toBe(400)
    expect(byHolder.body.code).toBe('redacted_without_value')
  })

  it('refuses a rollback to an older endpoint that would keep the current credentials', async () => {
    const before = await read('moved')
    const res = await mallory('PUT', '/v1/default/config/moved/version/1')
    expect(res.status).toBe(403)
    expect(res.body.permission).toBe('fw:update:credentials')
    expect((await read('moved')).version).toBe(before.version)
    expect((await install('moved', 'left-pad')).status).toBe(200)
    expect(attackerAuthorizations()).toEqual([])
  })

  it('refuses a rollback to a version with other credentials', async () => {
    const res = await mallory('PUT', '/v1/default/config/rotated/version/1')
    expect(res.status).toBe(403)
    expect(res.body.permission).toBe('fw:update:credentials')
  })

  it('refuses clone then edit when the clone grants no fw:update:credentials', async () => {
    const clone = await cloner('POST', '/v1/default/config/source/clone', { id: 'source-copy' })
    expect(clone.status).toBe(201)
    const moved = { ...clone.body, upstreams: toAttacker(clone.body.upstreams) }
    const res = await cloner('PUT', '/v1/default/config/source-copy', moved)
    expect(res.status).toBe(403)
    expect(res.body.permission).toBe('fw:update:credentials')
  })

  it('answers a holder of fw:update:credentials 400 for [REDACTED] on a new endpoint', async () => {
    const before = await read('fw')
    const res = await carol('PUT', '/v1/default/config/fw', await edited('fw', toAttacker))
    expect(res.status).toBe(400)
    expect(res.body.code).toBe('credentials_required_for_new_endpoint')
    expect(res.body.detail).toContain('new endpoint')
    expect(res.body.errors).toEqual([
      { path: 'upstreams[0].credentials.token', message: expect.stringContaining('new endpoint') },
    ])
    expect((await read('fw')).version).toBe(before.version)
  })

  it('accepts new credential values for a new endpoint from a holder of fw:update:credentials', async () => {
    const res = await carol(
      'PUT',
      '/v1/default/config/fw',
      await edited('fw', (ups) => [
        { ...ups[0], endpoint: attacker.url, credentials: { token: 'given-for-the-new-endpoint' } },
        ...ups.slice(1),
      ]),
    )
    expect(res.status).toBe(200)
    expect(res.body.upstreams[0]).toMatchObject({ endpoint: attacker.url, credentials: { token: '[REDACTED]' } })
    expect((await install('fw', 'right-pad')).status).toBe(200)
    expect(attackerAuthorizations()).toContain('Bearer given-for-the-new-endpoint')
  })

  it('never let the stored secret reach the attacker', () => {
    expect(attackerSeen.length).toBeGreaterThan(0)
    expect(attackerAuthorizations().join('\n')).not.toContain(SECRET)
  })
})
