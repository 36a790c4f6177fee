/**
 * The admin CLI's user commands: list-users, grant and revoke-token. They act as the operator
 * (an owner-level principal named `admin-cli`, which history and events record as the actor)
 * through the same domain functions as the API, so every rule and event applies.
 */
import { randomUUID } from 'node:crypto'
import { backendOptionsFromEnv, openBackend } from '../storage'
import { createServices, type Services } from '../server/app/services'
import type { Principal } from '../server/auth/principal'
import { DomainError } from '../server/common/errors'
import { CLIENT_ID_PATTERN } from '../server/common/ids'
import { FIREWALL_PERMISSIONS, type FirewallPermission } from '../server/firewall/schema'
import { grantOnFirewall } from '../server/firewall/grant'
import { GrantablePermission } from '../server/namespace/schema'
import { grantToTeam } from '../server/namespace/teams'
import { knownUsers } from '../server/namespace/users'
import { revokeToken } from '../server/namespace/tokens'
import { recordAudit } from '../server/http/audit'
import type { Command, Output } from './admin-output'

type Values = Record<string, string | boolean | undefined>

const text = (values: Values, name: string) => (typeof values[name] === 'string' ? values[name] : undefined)

/** The operator as a caller: owner of the namespace, for the domain's permission checks. */
function operator(ns: string): Principal {
  return {
    type: 'user',
    id: 'admin-cli',
    namespace: ns,
    tokenId: 'admin-cli',
    tokenIdentifier: 'admin-cli',
    teams: [],
    grants: [],
    owner: true,
  }
}

const callOf = (services: Services, ns: string) => ({
  services,
  ns,
  principal: operator(ns),
  meta: { requestId: `admin-${randomUUID()}` },
})

/** Opens storage, runs `work`, closes; a domain refusal is a message and exit 1, never a stack. */
async function withServices(out: Output, work: (services: Services) => Promise<number>): Promise<number> {
  const services = createServices(await openBackend(backendOptionsFromEnv(process.env)))
  try {
    return await work(services)
  } catch (error) {
    if (!(error instanceof DomainError)) throw error
    out.error(error.message)
    return 1
  } finally {
    await services.storage.close()
  }
}

export const LIST_USERS: Command = {
  usage: 'list-users --namespace <ns> [--json]',
  summary: 'Lists the known users of a namespace: id, source (oidc, admin, bootstrap), teams, last seen.',
  options: [['--namespace <ns>', 'the namespace']],
  async run(values, _positionals, out) {
    const ns = text(values, 'namespace')
    if (!ns) {
      out.error(`--namespace is required\nusage: npm run admin -- ${this.usage}`)
      return 2
    }
    return withServices(out, async (services) => {
      const users = await knownUsers(services, ns)
      const lines = users.map((u) => `${u.id}\t${u.source}\t${u.teams.join(',') || '-'}\t${u.lastSeenAt ?? 'never'}`)
      out.result(['id\tsource\tteams\tlast seen', ...lines].join('\n'), users)
      return 0
    })
  },
}

export const GRANT: Command = {
  usage:
    'grant --namespace <ns> --permission <p> (--firewall <fw> (--user <id> | --team <id> | --everybody) | --team <id>) [--json]',
  summary:
    "Grants a permission. With --firewall: on that firewall, to a known user, a team or everybody (a new version of the firewall). Without: a namespace permission to a team (users hold their teams' permissions).",
  options: [
    ['--namespace <ns>', 'the namespace'],
    ['--permission <p>', 'a permission string: fw:read, fw:access, ... or ns:teams:manage, ...'],
    ['--firewall <fw>', 'the firewall to grant on'],
    ['--user <id>', 'a known user (see list-users)'],
    ['--team <id>', 'a team id'],
    ['--everybody', 'every principal of the namespace (with --firewall)'],
  ],
  async run(values, _positionals, out) {
    const ns = text(values, 'namespace')
    const permission = text(values, 'permission')
    const firewall = text(values, 'firewall')
    const user = text(values, 'user')
    const team = text(values, 'team')
    const targets = [user, team, values.everybody === true ? 'everybody' : undefined].filter(Boolean)
    const usage = `usage: npm run admin -- ${this.usage}`
    if (!ns || !permission || targets.length !== 1 || (!firewall && !team)) {
      out.error(
        `--namespace, --permission and one of --user, --team, --everybody (with --firewall) are required\n${usage}`,
      )
      return 2
    }
    if (!GrantablePermission.safeParse(permission).success) {
      out.error(`"${permission}" is not a permission; one of: ${GrantablePermission.options.join(', ')}`)
      return 2
    }
    const principal = targets[0]!
    if (!CLIENT_ID_PATTERN.test(principal)) {
      out.error(`"${principal}" is not a valid id`)
      return 2
    }
    return withServices(out, async (services) => {
      const ctx = callOf(services, ns)
      if (!firewall) {
        const updated = await grantToTeam(ctx, principal, permission as GrantablePermission)
        out.result(`team ${updated.id} now holds: ${updated.permissions.join(', ')}`, updated)
        return 0
      }
      if (!(FIREWALL_PERMISSIONS as readonly string[]).includes(permission)) {
        out.error(
          `"${permission}" is a namespace permission; on a firewall grant one of ${FIREWALL_PERMISSIONS.join(', ')}`,
        )
        return 2
      }
      if (user && !(await services.namespaces.users(ns).find(user))) {
        out.error(`user "${user}" is not known in namespace "${ns}" (see list-users; create-user adds one)`)
        return 1
      }
      if (team && !(await services.teams(ns).find(team))) {
        out.error(`team "${team}" was not found in namespace "${ns}"`)
        return 1
      }
      const updated = await grantOnFirewall(ctx, firewall, principal, permission as FirewallPermission)
      out.result(
        `firewall ${firewall} (version ${updated.version}): ${principal} holds ${(updated.permissions[principal] ?? []).join(', ')}`,
        { firewall, version: updated.version, principal, permissions: updated.permissions[principal] ?? [] },
      )
      return 0
    })
  },
}

export const REVOKE_TOKEN: Command = {
  usage: 'revoke-token --namespace <ns> --token <tok-id> [--json]',
  summary: 'Revokes a personal or service token by its id (tok-...): it answers 401 from then on.',
  options: [
    ['--namespace <ns>', 'the namespace'],
    ['--token <id>', 'the token id (as lists show it), never the token itself'],
  ],
  async run(values, _positionals, out) {
    const ns = text(values, 'namespace')
    const id = text(values, 'token')
    if (!ns || !id) {
      out.error(`--namespace and --token are required\nusage: npm run admin -- ${this.usage}`)
      return 2
    }
    return withServices(out, async (services) => {
      const record = await services.tokens.findById(ns, id)
      if (!record || record.revokedAt) {
        out.error(`token "${id}" was not found in namespace "${ns}"`)
        return 1
      }
      const ctx = callOf(services, ns)
      await revokeToken(ctx, id)
      // The audit entry is also the namespace event that makes every running process drop the
      // authentication lookups it reuses for up to a second, as an API revocation does.
      await recordAudit(services, {
        ns,
        action: 'token.revoke',
        outcome: 'success',
        statusCode: 204,
        principal: ctx.principal,
        meta: ctx.meta,
        resourceType: 'token',
        resourceId: id,
      })
      out.result(`token ${id} (${record.kind}, ${record.principalId}) revoked`, {
        id,
        kind: record.kind,
        principalId: record.principalId,
      })
      return 0
    })
  },
}
