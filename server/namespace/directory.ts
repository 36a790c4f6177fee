import type { NamespacePorts } from './ports'
import { conflict, invalid, notFound } from '../common/errors'
import { CLIENT_ID_PATTERN } from '../common/ids'
import { issueToken } from './tokens'
import type { UserSource } from './schema'

function checkId(kind: string, id: string): void {
  if (!CLIENT_ID_PATTERN.test(id)) throw invalid('invalid_id', `${kind} id "${id}" must match ${CLIENT_ID_PATTERN}`)
}

/**
 * Creates a namespace owned by `user` and that user's first personal token. Used by the
 * bootstrap at start-up and by the admin CLI. `material` fixes the token (BOOTSTRAP_TOKEN).
 */
export async function createNamespaceWithOwner(
  services: NamespacePorts,
  ns: string,
  user: string,
  material?: string,
  source: UserSource = 'admin',
): Promise<string> {
  checkId('namespace', ns)
  checkId('user', user)
  const created = await services.namespaces.create(
    {
      id: ns,
      owner: user,
      createdAt: new Date(services.clock.now()).toISOString(),
    },
    source,
  )
  if (!created) throw conflict('namespace_exists', `namespace "${ns}" already exists`)
  const { material: token } = await issueToken(services, {
    ns,
    kind: 'personal',
    name: 'first token',
    principalId: user,
    createdBy: 'admin',
    material,
  })
  return token
}

/** Adds a member with no permissions yet and returns their first personal token. */
export async function createUser(services: NamespacePorts, ns: string, user: string): Promise<string> {
  checkId('user', user)
  if (!(await services.namespaces.get(ns))) throw notFound('namespace', ns)
  const createdAt = new Date(services.clock.now()).toISOString()
  await services.namespaces.users(ns).update((items) => {
    if (items.has(user)) throw conflict('user_exists', `user "${user}" already exists in namespace "${ns}"`)
    return { items: items.set(user, { id: user, createdAt, source: 'admin' }), result: undefined }
  })
  const { material } = await issueToken(services, {
    ns,
    kind: 'personal',
    name: 'first token',
    principalId: user,
    createdBy: 'admin',
  })
  return material
}
