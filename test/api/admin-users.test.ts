import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminCli, createUser } from '../support/admin'
import { apiClient, startServer, type Api, type RunningServer } from '../support/server'
import { eventually } from '../support/wait-for'

/** The admin CLI's list-users, grant and revoke-token, on the storage of a running server. */

const OWNER = 'fwp_adminUsersOwnerToken0123456789abcdefgh'
let server: RunningServer
let owner: Api
let carlToken: string

const run = promisify(execFile)
/** The CLI's exit code and both streams, for refusals. */
async function cli(...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], {
      env: { ...server.env, PORT: '' },
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

beforeAll(async () => {
  server = await startServer({ BOOTSTRAP_TOKEN: OWNER })
  owner = apiClient(server.url, OWNER)
  carlToken = await createUser(server, 'carl')
  const fw = await owner('PUT', '/v1/default/config/web', {
    ecosystem: 'npm',
    name: 'Web',
    upstreams: [{ id: 'npmjs', endpoint: 'https://registry.npmjs.org' }],
    rules: [],
    exceptions: [],
    permissions: {},
  })
  expect(fw.status).toBe(201)
  expect((await owner('POST', '/v1/default/teams', { id: 'auditors', name: 'Auditors' })).status).toBe(201)
}, 60_000)
afterAll(async () => server?.stop())

describe('admin CLI: users', () => {
  it('list-users shows every known user with its source', async () => {
    const users = JSON.parse(await adminCli(server, 'list-users', '--namespace', 'default', '--json'))
    expect(users).toEqual([
      { id: 'carl', teams: [], lastSeenAt: null, source: 'admin' },
      expect.objectContaining({ id: 'owner', teams: [], source: 'bootstrap' }),
    ])
  })

  it('grant on a firewall gives a known user the permission, as a new version', async () => {
    const carl = apiClient(server.url, carlToken)
    expect((await carl('GET', '/v1/default/config/web')).status).toBe(404)
    const granted = JSON.parse(
      await adminCli(
        server,
        'grant',
        '--namespace',
        'default',
        '--firewall',
        'web',
        '--user',
        'carl',
        '--permission',
        'fw:read',
        '--json',
      ),
    )
    expect(granted).toEqual({ firewall: 'web', version: 2, principal: 'carl', permissions: ['fw:read'] })
    // fs storage has no cross-process wake-up: the service may keep the firewall it read under the
    // namespace's write stamp for up to a second (RECENT_LOOKUP_LIMITS.ttlMs), never longer. (The
    // test passed at once only while the CLI itself took longer than that to start.)
    const grantedAt = Date.now()
    await eventually(async () => (await carl('GET', '/v1/default/config/web')).status, {
      accept: (status) => status === 200,
      timeoutMs: 2000,
      what: 'the granted firewall answering 200',
    })
    expect(Date.now() - grantedAt).toBeLessThan(2000)
    const history = await owner('GET', '/v1/default/config/web/history')
    expect(history.body[0]).toMatchObject({ version: 2, actor: expect.objectContaining({ userId: 'admin-cli' }) })
  })

  it('grant without a firewall gives a team a namespace permission', async () => {
    const out = await adminCli(
      server,
      'grant',
      '--namespace',
      'default',
      '--team',
      'auditors',
      '--permission',
      'ns:audit:read',
    )
    expect(out).toContain('ns:audit:read')
    const teams = await owner('GET', '/v1/default/teams')
    expect(teams.body.find((t: { id: string }) => t.id === 'auditors').permissions).toEqual(['ns:audit:read'])
  })

  it('grant refuses an unknown user and an unknown permission, changing nothing', async () => {
    const unknown = await cli(
      'grant',
      '--namespace',
      'default',
      '--firewall',
      'web',
      '--user',
      'nobody',
      '--permission',
      'fw:read',
    )
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('user "nobody" is not known')
    const bad = await cli(
      'grant',
      '--namespace',
      'default',
      '--firewall',
      'web',
      '--user',
      'carl',
      '--permission',
      'fw:everything',
    )
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('is not a permission')
    expect((await owner('GET', '/v1/default/config/web')).body.version).toBe(2)
  })

  it('revoke-token ends a token by its id', async () => {
    const carl = apiClient(server.url, carlToken)
    const mine = await carl('GET', '/v1/default/tokens/personal')
    expect(mine.status).toBe(200)
    const id = mine.body[0].id as string
    const out = await adminCli(server, 'revoke-token', '--namespace', 'default', '--token', id)
    expect(out).toContain(`token ${id} (personal, carl) revoked`)
    // fs storage has no cross-process wake-up: the service may reuse its lookup of the token for
    // up to a second (RECENT_LOOKUP_LIMITS.ttlMs), never longer.
    const revokedAt = Date.now()
    await eventually(async () => (await carl('GET', '/v1/default/me')).status, {
      accept: (status) => status === 401,
      timeoutMs: 2000,
      what: 'the revoked token answering 401',
    })
    expect(Date.now() - revokedAt).toBeLessThan(2000)
    const again = await cli('revoke-token', '--namespace', 'default', '--token', id)
    expect(again.code).toBe(1)
  })
})
