import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, bootstrapToken, startServer, type Api, type RunningServer } from '../support/server'
import { keys } from '../../storage/repositories/keys'

/**
 * docs/security.md, as an attacker meets it: a package-name glob that makes a
 * backtracking RegExp run for years (`*a*a…*ab` against a long run of `a`) is matched in linear
 * time, so a publish through the firewall answers promptly and the process keeps serving; and
 * patterns past the limits are refused on every path that stores rules.
 */
const ATTACK = `${'*a'.repeat(30)}b` // 30 stars
const VICTIM = 'a'.repeat(64) // never matches ATTACK (no `b`), the worst case for backtracking
const byName = (patterns: string[]) => ({ function: { name: 'packageName', patterns } })
const names = (count: number) => Array.from({ length: count }, (_, i) => `pkg-${i}`)
const HTTP_DEADLINE_MS = 20_000 // a frozen process would never answer; a working one answers in milliseconds

function publishBody(name: string, version: string) {
  const tarball = `http://registry.invalid/${name}/-/${name}-${version}.tgz`
  return {
    _id: name,
    name,
    'dist-tags': { latest: version },
    versions: { [version]: { name, version, dist: { tarball } } },
    _attachments: { [`${name}-${version}.tgz`]: { content_type: 'application/octet-stream', data: 'AAAA', length: 3 } },
  }
}

/** The file of the fs backend that holds `key` (keys map to paths, `:` to a directory level). */
function fileOfKey(dataDir: string, key: string): string {
  const wanted = key.split(':').join(sep)
  const walk = (dir: string): string | undefined => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) {
        const found = walk(path)
        if (found) return found
      } else if (relative(dataDir, path).endsWith(wanted)) {
        return path
      }
    }
    return undefined
  }
  const found = walk(dataDir)
  if (!found) throw new Error(`no file for ${key} under ${dataDir}`)
  return found
}

describe('package-name globs cannot freeze the process', () => {
  let server: RunningServer
  let owner: Api
  let token: string
  beforeAll(async () => {
    // No upstream is contacted (the publish is blocked first); the setting keeps a loopback one usable anyway.
    server = await startServer({ UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' })
    token = bootstrapToken(server)
    owner = apiClient(server.url, token)
    const created = await owner('PUT', '/v1/default/config/redos', {
      upstreams: [{ id: 'internal', endpoint: 'https://registry.invalid', internal: true }],
      rules: [
        // Evaluated first, against every published name: the expensive rule.
        { id: 'adversarial', executionPhase: 'upload', selector: byName([ATTACK, ATTACK.slice(1), `@${ATTACK}`]) },
        // Then a plain block, so that the publish is refused before any upstream is called.
        { id: 'stop', executionPhase: 'upload', selector: byName([VICTIM]), description: 'stopped' },
      ],
      // Exception selectors are globs too: checked against the name because `stop` matched.
      exceptions: [{ id: 'ex', rule: 'stop', selector: { packageName: ATTACK } }],
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
  })

  it('answers publishes of a 64-letter name promptly, and /healthz keeps answering meanwhile', async () => {
    const publish = async (version: string) => {
      const started = performance.now()
      const response = await fetch(`${server.url}/registry/default/redos/${VICTIM}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(publishBody(VICTIM, version)),
        signal: AbortSignal.timeout(HTTP_DEADLINE_MS),
      })
      return { status: response.status, text: await response.text(), ms: performance.now() - started }
    }
    const healthz = async () => {
      const response = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(HTTP_DEADLINE_MS) })
      return response.status
    }
    const [publishes, health] = await Promise.all([
      Promise.all(['1.0.0', '1.0.1', '1.0.2', '1.0.3'].map(publish)),
      Promise.all([healthz(), healthz()]),
    ])
    for (const result of publishes) {
      // The adversarial rule did not match (no `b`), the plain one did, the exception did not: a block.
      expect(result.status, result.text).toBe(403)
      expect(result.text).toContain('rule stop')
      expect(result.ms).toBeLessThan(HTTP_DEADLINE_MS)
    }
    expect(health).toEqual([200, 200])
    expect(await healthz()).toBe(200)
  })

  it('refuses a 215-character pattern with 400 validation_failed pointing at it (PUT firewall, PUT rule)', async () => {
    const long = `${'a'.repeat(214)}*`
    const put = await owner('PUT', '/v1/default/config/redos-long', {
      rules: [{ id: 'r', executionPhase: 'download', selector: byName(['ok-*', long]) }],
    })
    expect(put.status).toBe(400)
    expect(put.body.code).toBe('validation_failed')
    expect(put.body.errors).toContainEqual({
      path: 'rules[0].selector.function.patterns[1]',
      message: 'a package-name pattern is at most 214 characters',
    })
    expect((await owner('GET', '/v1/default/config/redos-long')).status).toBe(404)

    const rule = await owner('PUT', '/v1/default/config/redos/rules/long', {
      executionPhase: 'download',
      selector: { function: { name: 'not', selector: byName([long]) } },
    })
    expect(rule.status).toBe(400)
    expect(rule.body.code).toBe('validation_failed')
    expect(rule.body.errors).toContainEqual({
      path: 'selector.function.selector.function.patterns[0]',
      message: 'a package-name pattern is at most 214 characters',
    })

    const exception = await owner('PUT', '/v1/default/config/redos/exceptions/long', {
      rule: 'stop',
      selector: { packageName: long },
    })
    expect(exception.status).toBe(400)
    expect(exception.body.errors).toContainEqual({
      path: 'selector.packageName',
      message: expect.stringContaining('214'),
    })
  })

  it('refuses a rule with 1,001 patterns, also spread over its selectors, and accepts 1,000', async () => {
    const tooMany = await owner('PUT', '/v1/default/config/redos-many', {
      rules: [{ id: 'r', executionPhase: 'download', selector: byName(names(1001)) }],
    })
    expect(tooMany.status).toBe(400)
    expect(tooMany.body.code).toBe('validation_failed')
    expect(tooMany.body.errors).toContainEqual({
      path: 'rules[0].selector.function.patterns',
      message: 'a rule holds at most 1000 package-name patterns',
    })

    const spread = await owner('PUT', '/v1/default/config/redos/rules/spread', {
      executionPhase: 'download',
      selector: { function: { name: 'all', selectors: [byName(names(500)), byName(names(501))] } },
    })
    expect(spread.status).toBe(400)
    expect(spread.body.errors).toContainEqual({
      path: 'selector.function.selectors[1].function.patterns[500]',
      message: 'a rule holds at most 1000 package-name patterns',
    })

    const limit = await owner('PUT', '/v1/default/config/redos/rules/limit', {
      executionPhase: 'download',
      selector: byName([...names(999), `${'x'.repeat(213)}*`]),
    })
    expect(limit.status, JSON.stringify(limit.body)).toBe(201)
  })
})

describe('pattern limits on stored data (a version saved before the limits existed)', () => {
  let server: RunningServer
  let owner: Api
  let dataDir: string
  beforeAll(async () => {
    server = await startServer()
    dataDir = server.env.DATA_DIR
    owner = apiClient(server.url, bootstrapToken(server))
    const rule = { id: 'big', executionPhase: 'download', selector: byName(['a-*']) }
    expect((await owner('PUT', '/v1/default/config/legacy', { rules: [rule] })).status).toBe(201)
    expect((await owner('PUT', '/v1/default/config/legacy', { rules: [rule], description: 'v2' })).status).toBe(200)
    await server.stop()
    // What an older release could store: version 1 and the live document with 1,001 patterns.
    for (const key of [keys.firewallVersion('default', 'legacy', 1), keys.firewall('default', 'legacy')]) {
      const file = fileOfKey(dataDir, key)
      const doc = JSON.parse(readFileSync(file, 'utf8'))
      const config = doc.config ?? doc
      config.rules[0].selector.function.patterns = [...names(1000), 'z'.repeat(300)]
      writeFileSync(file, JSON.stringify(doc))
    }
    server = await startServer({ DATA_DIR: dataDir })
    owner = apiClient(server.url, bootstrapToken(server))
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
  })

  it('refuses a rollback to such a version with 400 validation_failed and keeps the current version', async () => {
    const before = await owner('GET', '/v1/default/config/legacy')
    const rollback = await owner('PUT', '/v1/default/config/legacy/version/1')
    expect(rollback.status).toBe(400)
    expect(rollback.body.code).toBe('validation_failed')
    expect(rollback.body.errors).toEqual([
      { path: 'rules[0].selector.function.patterns[1000]', message: 'a rule holds at most 1000 package-name patterns' },
      {
        path: 'rules[0].selector.function.patterns[1000]',
        message: 'a package-name pattern is at most 214 characters',
      },
    ])
    const after = await owner('GET', '/v1/default/config/legacy')
    expect(after.body.version).toBe(before.body.version)
  })

  it('refuses to clone such a firewall with 400 validation_failed', async () => {
    const clone = await owner('POST', '/v1/default/config/legacy/clone', { id: 'legacy-copy' })
    expect(clone.status).toBe(400)
    expect(clone.body.code).toBe('validation_failed')
    expect(clone.body.errors).toContainEqual({
      path: 'rules[0].selector.function.patterns',
      message: 'a rule holds at most 1000 package-name patterns',
    })
    expect((await owner('GET', '/v1/default/config/legacy-copy')).status).toBe(404)
  })
})
