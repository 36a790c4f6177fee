import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, startServer, type Api, type RunningServer } from '../support/server'
import { readEvents } from '../support/events'
import { sharedStorageEnv } from '../support/backends'
import { privateRedis } from '../support/redis'
import { commandsDuring as monitorCommands } from '../support/redis-monitor'
import { createUser } from '../support/admin'

/**
 * Rule and exception upserts and deletes write their audit entry in the change's own transaction
 * (#27: one round trip instead of two): the audit log and the event log must read exactly as when
 * the router wrote the entry after the change, one entry per call.
 */
const TOKEN = 'fwp_memberWritesTestToken0000000000000001'
const rule = (id: string, patterns = ['evil-*']) => ({
  id,
  executionPhase: 'download',
  selector: { function: { name: 'packageName', patterns } },
  ruleEffect: { block: true, log: true },
})

interface AuditEntry {
  action: string
  outcome: string
  statusCode: number
  requestId: string
  [field: string]: unknown
}

describe('rule and exception writes, audited with their change (redis)', () => {
  let servers: RunningServer[] = []
  let api: Api
  let env: Record<string, string>
  let ownRedis: Awaited<ReturnType<typeof privateRedis>> | undefined
  beforeAll(async () => {
    // A Redis of this file's own: its MONITOR must not see other files' servers (ioredis raised
    // "Command queue state error" when their traffic came with the MONITOR's own reply).
    ownRedis = await privateRedis()
    env = { ...(await sharedStorageEnv('redis', 'members')), REDIS_URL: ownRedis.url, BOOTSTRAP_TOKEN: TOKEN }
    servers = await Promise.all([startServer(env), startServer(env)])
    api = apiClient(servers[0].url, TOKEN)
    expect((await api('PUT', '/v1/default/config/web', {})).status).toBe(201)
  })
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    await ownRedis?.stop()
  })

  const auditOf = async (requestId: string): Promise<AuditEntry[]> => {
    const audit = await api('GET', '/v1/default/audit?limit=1000')
    expect(audit.status).toBe(200)
    return (audit.body as AuditEntry[]).filter((entry) => entry.requestId === requestId)
  }

  it('audits each call once, with the status it answered, after the change event it made', async () => {
    const calls: [string, Awaited<ReturnType<Api>>][] = []
    const call = async (label: string, method: string, path: string, body?: unknown) => {
      const response = await api(method, path, body)
      calls.push([label, response])
      return response
    }
    expect((await call('created', 'PUT', '/v1/default/config/web/rules/r1', rule('r1'))).status).toBe(201)
    expect((await call('replaced', 'PUT', '/v1/default/config/web/rules/r1', rule('r1', ['bad-*']))).status).toBe(200)
    expect((await call('unchanged', 'PUT', '/v1/default/config/web/rules/r1', rule('r1', ['bad-*']))).status).toBe(200)
    const exception = { id: 'e1', rule: 'r1', selector: { packageName: 'bad-one' } }
    expect((await call('exception', 'PUT', '/v1/default/config/web/exceptions/e1', exception)).status).toBe(201)
    expect((await call('exception deleted', 'DELETE', '/v1/default/config/web/exceptions/e1')).status).toBe(204)
    expect((await call('deleted', 'DELETE', '/v1/default/config/web/rules/r1')).status).toBe(204)
    expect(
      (await call('refused', 'PUT', '/v1/default/config/web/rules/r2', rule('r2', ['x'.repeat(215)]))).status,
    ).toBe(400)
    expect((await call('missing', 'DELETE', '/v1/default/config/web/rules/r1')).status).toBe(404)

    const events = await readEvents(servers[0])
    for (const [label, response] of calls) {
      const requestId = response.headers.get('x-request-id')!
      const entries = await auditOf(requestId)
      expect(entries, label).toHaveLength(1)
      const isDelete = label.includes('deleted') || label === 'missing'
      const noun = label.startsWith('exception') ? 'exception' : 'rule'
      expect(entries[0], label).toMatchObject({
        action: `firewall.${noun}.${isDelete ? 'delete' : 'upsert'}`,
        outcome: response.status < 400 ? 'success' : 'failure',
        statusCode: response.status,
        resourceType: 'firewall',
        resourceId: 'web',
        actorUserId: 'owner',
        requestMethod: isDelete ? 'DELETE' : 'PUT',
      })
      expect(entries[0].actorTokenIdentifier, label).toMatch(/^tid_/)
      // The audit event follows the change's own event in the log, as when they were two writes.
      const at = events.findIndex((event) => event.type.startsWith('audit.') && event.data.requestId === requestId)
      expect(at, label).toBeGreaterThan(0)
      const changed = ['created', 'replaced', 'exception', 'exception deleted', 'deleted'].includes(label)
      expect(events[at - 1].type === 'config.firewall.updated', label).toBe(changed)
      expect(
        events.filter((event) => event.data.requestId === requestId),
        label,
      ).toHaveLength(1)
      expect(events[at].id, label).toBe(entries[0].id)
    }
    const versions = events
      .filter((event) => event.type === 'config.firewall.updated')
      .map((event) => (event.data as { version: number }).version)
    expect(versions).toEqual([2, 3, 4, 5, 6])
  })

  it('answers 201 only to the upsert whose stored document lacked the rule, and audits that status', async () => {
    // Two processes, a new rule each time: whichever commits second replaces it (200).
    for (let round = 0; round < 5; round++) {
      const id = `race-${round}`
      const answers = await Promise.all(
        servers.map((server, i) =>
          apiClient(server.url, TOKEN)('PUT', `/v1/default/config/web/rules/${id}`, rule(id, [`p${i}-*`])),
        ),
      )
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 201])
      for (const answer of answers) {
        const [entry] = await auditOf(answer.headers.get('x-request-id')!)
        expect(entry.statusCode).toBe(answer.status)
      }
    }
  })

  it('writes on the stored document when another process changed it since this one read it', async () => {
    const [a, b] = servers.map((server) => apiClient(server.url, TOKEN))
    expect((await a('PUT', '/v1/default/config/web/rules/kept', rule('kept'))).status).toBe(201)
    const before = (await a('GET', '/v1/default/config/web')).body.version
    expect((await b('PUT', '/v1/default/config/web/rules/other', rule('other'))).status).toBe(201)
    // A firewall created through the other process changes the namespace's index too.
    expect((await b('PUT', '/v1/default/config/second', {})).status).toBe(201)
    const written = await a('PUT', '/v1/default/config/web/rules/kept', rule('kept', ['changed-*']))
    expect(written.status).toBe(200)
    expect(written.body.version).toBe(before + 2)
    expect(written.body.rules.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining(['kept', 'other']))
    const history = await b('GET', '/v1/default/config/web/history?limit=2')
    expect(history.body.map((entry: { version: number }) => entry.version)).toEqual([before + 2, before + 1])
    expect(history.body[0].summary).toBe('rule kept changed')
  })

  /**
   * The top-level commands this file's servers send on the namespace's firewall keys while `run`
   * runs (not the authentication's reads, which a slow run repeats).
   */
  const commandsDuring = (run: () => Promise<void>): Promise<string[][]> =>
    monitorCommands(
      env.REDIS_URL,
      run,
      (args) => args.some((arg) => arg.startsWith(env.REDIS_PREFIX) && arg.includes('{default}:fw')),
      env.REDIS_PREFIX,
    )

  it('makes a no-op upsert one transaction: the check that nothing changed and its audit entry', async () => {
    expect((await api('PUT', '/v1/default/config/web/rules/same', rule('same'))).status).toBe(201)
    const version = (await api('GET', '/v1/default/config/web')).body.version
    const calls = 5
    const ids: string[] = []
    const commands = await commandsDuring(async () => {
      for (let i = 0; i < calls; i++) {
        const unchanged = await api('PUT', '/v1/default/config/web/rules/same', rule('same'))
        expect(unchanged.status).toBe(200)
        expect(unchanged.body.version).toBe(version)
        ids.push(unchanged.headers.get('x-request-id')!)
      }
    })
    // One compare-and-set per call (before: the check, then the router's audit entry in a second one).
    expect(commands.filter((args) => args[0].toLowerCase() === 'evalsha')).toHaveLength(calls)
    for (const id of ids) expect(await auditOf(id)).toHaveLength(1)
    expect((await api('GET', '/v1/default/config/web')).body.version).toBe(version)
  })

  it('writes one after another upsert of the same firewall without reading it back', async () => {
    expect((await api('PUT', '/v1/default/config/web/rules/own-0', rule('own-0'))).status).toBe(201)
    const commands = await commandsDuring(async () => {
      for (let i = 1; i <= 4; i++) {
        const written = await api('PUT', `/v1/default/config/web/rules/own-${i}`, rule(`own-${i}`))
        expect(written.status).toBe(201)
        expect(written.body.rules.map((r: { id: string }) => r.id)).toContain(`own-${i - 1}`)
      }
    })
    // #27: each was a read of the document its own previous write stored (MGET), then the write.
    expect(commands.map((args) => args[0].toLowerCase())).toEqual(['evalsha', 'evalsha', 'evalsha', 'evalsha'])
  })

  it('writes on what another process stored without a read: the refused compare-and-set answers it', async () => {
    const clients = servers.map((server) => apiClient(server.url, TOKEN))
    // Each process has written the firewall once: each knows a version, soon out of date.
    for (const [i, client] of clients.entries())
      expect((await client('PUT', `/v1/default/config/web/rules/turn-w${i}`, rule(`turn-w${i}`))).status).toBe(201)
    const commands = await commandsDuring(async () => {
      for (let turn = 0; turn < 4; turn++) {
        const written = await clients[turn % 2](
          'PUT',
          `/v1/default/config/web/rules/turn-${turn}`,
          rule(`turn-${turn}`),
        )
        expect(written.status).toBe(201)
        // Written on the other process's version, whose rule it keeps.
        if (turn > 0) expect(written.body.rules.map((r: { id: string }) => r.id)).toContain(`turn-${turn - 1}`)
      }
    })
    // Each: the compare-and-set on the version it knew, refused with what is stored, then on that.
    expect(commands.map((args) => args[0].toLowerCase())).toEqual(Array(8).fill('evalsha'))
  })

  it('refuses a caller whose grant another process removed, though this process last stored it', async () => {
    const [a, b] = servers.map((server) => apiClient(server.url, TOKEN))
    const editor = apiClient(servers[0].url, await createUser(servers[0], 'editor'))
    const grant = (permissions: string[]) =>
      a('PUT', '/v1/default/config/granted', { permissions: { editor: permissions } })
    expect((await grant(['fw:read', 'fw:update:rule'])).status).toBe(201)
    expect((await editor('PUT', '/v1/default/config/granted/rules/r1', rule('r1'))).status).toBe(201)

    // Through the other process: read only (the whole configuration replaced: r1 is gone too).
    expect((await b('PUT', '/v1/default/config/granted', { permissions: { editor: ['fw:read'] } })).status).toBe(200)
    const forbidden = await editor('PUT', '/v1/default/config/granted/rules/r2', rule('r2'))
    expect(forbidden.status).toBe(403)
    expect(forbidden.body).toMatchObject({ code: 'permission_denied', permission: 'fw:update:rule' })
    // Then nothing at all: the edit's own "rule not found" must not tell the caller the firewall exists.
    expect((await b('PUT', '/v1/default/config/granted', { permissions: {} })).status).toBe(200)
    const hidden = await editor('DELETE', '/v1/default/config/granted/rules/r1')
    expect(hidden.status).toBe(404)
    expect(hidden.body.code).toBe('firewall_not_found')
    const stored = await b('GET', '/v1/default/config/granted')
    expect(stored.body).toMatchObject({ version: 4, rules: [] })
  })
})
