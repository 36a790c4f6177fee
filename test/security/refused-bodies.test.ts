import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, bootstrapToken, startServer, type Api, type RunningServer } from '../support/server'
import { createBackend } from '../../storage'
import { ExposureRepository } from '../../storage/repositories/exposures'
import { systemClock } from '../../server/common/clock'
import { makeEvent } from '../../server/events/factory'
import { exposureData } from '../../server/exposures/detector'

/**
 * CONTRACT section 8, "bodies" and "action bodies" (issue 24, finding 7): every operation of the
 * OpenAPI document that takes a body is sent what is not a JSON object (`null`, no body at all, an
 * empty body, arrays, strings, numbers, booleans) and objects whose fields have the wrong type, on
 * paths naming resources that exist (so nothing stops the request before its body). Each must be
 * refused with a 400 problem, and after each the namespace's stored state, read through the API
 * (firewalls with their version histories, webhooks and their secrets, teams and members, tokens,
 * license sets, exception requests), is byte-for-byte what it was. Operations that take no body are
 * sent the same non-object bodies. No answer is ever a 5xx.
 */

interface BodyOperation {
  id: string
  method: string
  path: string
  /** false for the actions whose body may be absent (approve, deny). */
  required: boolean
  properties: Record<string, JsonSchema>
}

interface JsonSchema {
  type?: string | string[]
  $ref?: string
  properties?: Record<string, JsonSchema>
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string
        requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema }> }
      }
    >
  >
  components: { schemas: Record<string, JsonSchema> }
}

/** Bodies that are not a JSON object, as sent on the wire (undefined: no body and no content type). */
const NOT_OBJECTS: { name: string; raw: string | undefined; code: string; optionalToo: boolean }[] = [
  { name: 'no body', raw: undefined, code: 'body_required', optionalToo: false },
  { name: 'empty body', raw: '', code: 'body_required', optionalToo: false },
  { name: 'whitespace body', raw: ' \n ', code: 'body_required', optionalToo: false },
  { name: 'null', raw: 'null', code: 'body_not_object', optionalToo: true },
  { name: 'empty array', raw: '[]', code: 'body_not_object', optionalToo: true },
  { name: 'array of an object', raw: '[{}]', code: 'body_not_object', optionalToo: true },
  { name: 'string', raw: '"all"', code: 'body_not_object', optionalToo: true },
  { name: 'empty string', raw: '""', code: 'body_not_object', optionalToo: true },
  { name: 'number', raw: '0', code: 'body_not_object', optionalToo: true },
  { name: 'negative number', raw: '-1', code: 'body_not_object', optionalToo: true },
  { name: 'boolean', raw: 'false', code: 'body_not_object', optionalToo: true },
]

/** A value of the wrong JSON type for `schema` (a $ref or a union gets nested arrays, which none of them takes). */
function wrongValueFor(schema: JsonSchema, components: Record<string, JsonSchema>): unknown {
  const resolved = schema.$ref ? components[schema.$ref.replace('#/components/schemas/', '')] : schema
  const type = Array.isArray(resolved?.type) ? resolved.type[0] : resolved?.type
  switch (type) {
    case 'string':
      return 12345
    case 'integer':
    case 'number':
      return 'not a number'
    case 'boolean':
      return 'yes'
    case 'array':
      return { not: 'an array' }
    case 'object':
      return ['not', 'an', 'object']
    default:
      return [[[]]]
  }
}

describe('bodies that are not JSON objects, or hold wrong types, are refused and change nothing', () => {
  let server: RunningServer
  let api: Api
  let doc: OpenApiDocument
  const ids = {
    ns: 'default',
    fw: 'fw-state',
    ruleId: 'r-block',
    exceptionId: 'ex-kept',
    upstreamId: 'up-main',
    host: 'files.example.com',
    team: 'team-kept',
    licenseSet: '',
    webhook: '',
    request: '',
    exposure: 'exp-kept',
  }

  beforeAll(async () => {
    server = await startServer({ API_RATE_LIMIT: 'off', AUTH_FAILURE_RATE_LIMIT: 'off' })
    api = apiClient(server.url, bootstrapToken(server))
    const created = (res: { status: number; body: unknown }, status = 201) => {
      expect(res.status, JSON.stringify(res.body)).toBe(status)
      return res.body as Record<string, string>
    }
    ids.licenseSet = created(await api('POST', '/v1/default/license-sets', { name: 'ok', licenses: ['MIT'] })).id
    created(
      await api('PUT', `/v1/default/config/${ids.fw}`, {
        name: 'State kept',
        rules: [
          {
            id: ids.ruleId,
            executionPhase: 'download',
            selector: { function: { name: 'packageName', patterns: ['evil-*'] } },
            ruleEffect: { block: true, log: true },
          },
        ],
        exceptions: [{ id: ids.exceptionId, rule: ids.ruleId, selector: { packageName: 'evil-but-fine' } }],
        upstreams: [
          {
            id: ids.upstreamId,
            endpoint: 'https://registry.example.com',
            credentials: { token: 'upstream-secret-token' },
          },
        ],
        permissions: { everybody: ['fw:access'] },
      }),
    )
    // A second version, so the history has more than one entry to keep.
    created(
      await api('PUT', `/v1/default/config/${ids.fw}`, {
        ...(await api('GET', `/v1/default/config/${ids.fw}`)).body,
        description: 'v2',
      }),
      200,
    )
    created(await api('POST', '/v1/default/teams', { id: ids.team, name: 'Kept' }))
    created(await api('POST', `/v1/default/teams/${ids.team}/members`, { userId: 'alice' }))
    // An event type nothing in this suite emits: the webhook's state must not move on its own.
    ids.webhook = created(
      await api('POST', '/v1/default/webhooks', {
        name: 'kept',
        url: 'https://hooks.example.com/in',
        eventTypes: ['package.unlisted'],
      }),
    ).id
    created(await api('POST', '/v1/default/tokens/service', { name: 'svc', permissions: ['ns:teams:manage'] }))
    ids.request = created(
      await api('POST', `/v1/default/config/${ids.fw}/exception-requests`, {
        proposedException: {
          id: 'ex-asked',
          rule: ids.ruleId,
          selector: { packageName: 'evil-asked', version: '1.0.0' },
        },
        justification: 'needed for the build',
      }),
    ).id
    // An exposure of the firewall, written to the server's storage as its detector would, so the
    // acknowledge operation reaches its body (a missing exposure is a 404 before it).
    const backend = await createBackend({ dataDir: server.env.DATA_DIR })
    const time = new Date().toISOString()
    await new ExposureRepository(backend).recordNew(
      'default',
      [
        {
          id: ids.exposure,
          firewall: ids.fw,
          ecosystem: 'npm',
          packageName: 'evil-served',
          version: '1.0.0',
          advisory: { id: 'MAL-2026-1', aliases: [], kind: 'malware' },
          firstServedAt: time,
          lastServedAt: time,
          servedTo: ['owner'],
          detectedAt: time,
          status: 'open',
        },
      ],
      (record) => makeEvent(systemClock, 'default', 'firewall.exposure', exposureData(record)),
    )
    await backend.close()
    doc = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as OpenApiDocument
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  /** The namespace's state as the API shows it, with the one field a read itself moves (`lastUsedAt`). */
  async function namespaceState(): Promise<string> {
    const read = async (path: string) => {
      const res = await api('GET', path)
      expect(res.status, `GET ${path}`).toBe(200)
      return res.body
    }
    const firewalls = (await read('/v1/default/config')) as { id: string }[]
    const perFirewall = []
    for (const { id } of firewalls) {
      perFirewall.push({
        firewall: await read(`/v1/default/config/${id}`),
        history: await read(`/v1/default/config/${id}/history`),
        requests: await read(`/v1/default/config/${id}/exception-requests`),
      })
    }
    const webhooks = (await read('/v1/default/webhooks')) as { id: string }[]
    const perWebhook = []
    for (const { id } of webhooks) {
      perWebhook.push({
        webhook: await read(`/v1/default/webhooks/${id}`),
        secret: await read(`/v1/default/webhooks/${id}/secret`),
      })
    }
    const teams = (await read('/v1/default/teams')) as { id: string }[]
    const members = []
    for (const { id } of teams) members.push(await read(`/v1/default/teams/${id}/members`))
    const tokens = [
      ...((await read('/v1/default/tokens/personal')) as object[]),
      ...((await read('/v1/default/tokens/service')) as object[]),
    ].map((token) => ({ ...token, lastUsedAt: null }))
    return JSON.stringify({
      firewalls,
      perFirewall,
      webhooks,
      perWebhook,
      teams,
      members,
      tokens,
      licenseSets: await read('/v1/default/license-sets'),
    })
  }

  /** The path of an operation with every parameter naming a resource that exists. */
  function concretePath(path: string): string {
    const byName: Record<string, string> = {
      ns: ids.ns,
      fw: ids.fw,
      ruleId: ids.ruleId,
      exceptionId: ids.exceptionId,
      upstreamId: ids.upstreamId,
      host: ids.host,
      team: ids.team,
      licenseSet: ids.licenseSet,
      // `{id}` is a webhook's id under /webhooks, an exception request's under /exception-requests
      // and an exposure's under /exposures.
      id: path.includes('/exception-requests/')
        ? ids.request
        : path.includes('/exposures/')
          ? ids.exposure
          : ids.webhook,
      version: '1',
      userId: 'alice',
      token: 'tok-none',
      deliveryId: 'whdel-none',
    }
    return path.replace(/\{(\w+)\}/g, (_, name: string) => {
      expect(byName[name], `no value for path parameter ${name}`).toBeDefined()
      return encodeURIComponent(byName[name])
    })
  }

  async function send(method: string, path: string, raw: string | undefined) {
    const response = await fetch(server.url + path, {
      method,
      headers: {
        authorization: `Bearer ${bootstrapToken(server)}`,
        ...(raw !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: raw,
    })
    const text = await response.text()
    let body: { code?: string } | string
    try {
      body = JSON.parse(text)
    } catch {
      body = text
    }
    return { status: response.status, type: response.headers.get('content-type') ?? '', body }
  }

  function bodyOperations(): BodyOperation[] {
    const operations: BodyOperation[] = []
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, spec] of Object.entries(methods)) {
        if (!spec.requestBody || !path.startsWith('/v1/{ns}')) continue
        let schema = spec.requestBody.content['application/json'].schema
        if (schema.$ref) schema = doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')]
        operations.push({
          id: spec.operationId,
          method: method.toUpperCase(),
          path,
          required: spec.requestBody.required !== false,
          properties: schema.properties ?? {},
        })
      }
    }
    return operations
  }

  it('the document marks which operations need a body: all but approve, deny and acknowledge', () => {
    const operations = bodyOperations()
    expect(operations.length).toBeGreaterThanOrEqual(18)
    expect(
      operations
        .filter((op) => !op.required)
        .map((op) => op.id)
        .sort(),
    ).toEqual(['acknowledgeExposure', 'approveExceptionRequest', 'denyExceptionRequest'])
  })

  it('every operation taking a body refuses non-objects and wrong types with 400, and the state stays', async () => {
    let before = await namespaceState()
    const failures: string[] = []
    let sent = 0
    for (const operation of bodyOperations()) {
      const path = concretePath(operation.path)
      const bodies: { name: string; raw: string | undefined; code?: string }[] = NOT_OBJECTS.filter(
        (body) => operation.required || body.optionalToo,
      )
      const fields = Object.entries(operation.properties)
      const wrong = (schema: JsonSchema) => wrongValueFor(schema, doc.components.schemas)
      for (const [name, schema] of fields)
        bodies.push({ name: `${name} of the wrong type`, raw: JSON.stringify({ [name]: wrong(schema) }) })
      if (fields.length > 1)
        bodies.push({
          name: 'every field of the wrong type',
          raw: JSON.stringify(Object.fromEntries(fields.map(([name, schema]) => [name, wrong(schema)]))),
        })
      for (const body of bodies) {
        const what = `${operation.method} ${operation.path} with ${body.name}`
        const res = await send(operation.method, path, body.raw)
        sent++
        const code = typeof res.body === 'object' ? res.body.code : undefined
        if (res.status !== 400 || !res.type.includes('application/problem+json'))
          failures.push(`${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`)
        else if (body.code && code !== body.code) failures.push(`${what}: code ${code}, expected ${body.code}`)
        const after = await namespaceState()
        if (after !== before) {
          failures.push(`${what}: the namespace's state changed`)
          before = after // each later change is reported as its own
        }
      }
    }
    expect(failures).toEqual([])
    expect(sent).toBeGreaterThan(200)
  }, 600_000)

  it('operations that take no body refuse every non-empty one and change nothing', async () => {
    let before = await namespaceState()
    const failures: string[] = []
    const actions = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([method, spec]) => method !== 'get' && method !== 'delete' && !spec.requestBody)
        .map(([method, spec]) => ({ id: spec.operationId, method: method.toUpperCase(), path })),
    )
    // rotate, release, test send, resend, withdraw, rollback: a body read as "nothing" would act.
    expect(actions.map((a) => a.id)).toEqual(
      expect.arrayContaining(['rotateWebhookSecret', 'withdrawExceptionRequest']),
    )
    for (const action of actions) {
      for (const raw of ['null', '[]', '"x"', '1', 'true', '{"x":1}']) {
        const res = await send(action.method, concretePath(action.path), raw)
        const code = typeof res.body === 'object' ? res.body.code : undefined
        if (res.status !== 400 || code !== 'unexpected_body')
          failures.push(`${action.method} ${action.path} with ${raw}: ${res.status} ${code}`)
        const after = await namespaceState()
        if (after !== before) {
          failures.push(`${action.method} ${action.path} with ${raw}: state changed`)
          before = after
        }
      }
    }
    expect(failures).toEqual([])
  }, 300_000)

  it('approve and deny still take no body, an empty body or {} (and act on it)', async () => {
    const ask = async (packageName: string) =>
      (
        await api('POST', `/v1/default/config/${ids.fw}/exception-requests`, {
          proposedException: { id: `ex-${packageName}`, rule: ids.ruleId, selector: { packageName } },
          justification: 'needed',
        })
      ).body.id as string
    const base = `/v1/default/config/${ids.fw}/exception-requests`
    const approvedBare = await send('POST', `${base}/${await ask('evil-one')}/approve`, undefined)
    expect(approvedBare.status).toBe(200)
    const deniedEmpty = await send('POST', `${base}/${await ask('evil-two')}/deny`, '')
    expect(deniedEmpty.status).toBe(200)
    expect((await send('POST', `${base}/${await ask('evil-three')}/deny`, '{}')).status).toBe(200)
  })

  it('PUT of a firewall with null or no body leaves its rules, upstreams and permissions (the reported loss)', async () => {
    for (const raw of ['null', undefined]) {
      const before = await api('GET', `/v1/default/config/${ids.fw}`)
      const res = await send('PUT', `/v1/default/config/${ids.fw}`, raw)
      expect(res.status).toBe(400)
      const after = await api('GET', `/v1/default/config/${ids.fw}`)
      expect(after.body).toEqual(before.body)
      expect(after.body.rules).toHaveLength(1)
      expect(after.body.upstreams).toHaveLength(1)
    }
  })
})
