/**
 * Admin CLI on the same storage as the service (same env):
 *   npm run admin -- create-namespace --namespace <ns> --user <id>
 *   npm run admin -- create-user --namespace <ns> --user <id>
 * Each prints the new user's first personal token alone on the last line of stdout.
 */
import { parseArgs } from 'node:util'
import { createBackend } from '../storage'
import { createServices } from '../server/app/services'
import { createNamespaceWithOwner, createUser } from '../server/namespace/directory'
import { DomainError } from '../server/common/errors'

const USAGE = 'usage: npm run admin -- create-namespace|create-user --namespace <ns> --user <id>'

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { namespace: { type: 'string' }, user: { type: 'string' } },
  })
  const [command] = positionals
  if (!command || !values.namespace || !values.user || !['create-namespace', 'create-user'].includes(command)) {
    process.stderr.write(USAGE + '\n')
    return 2
  }
  const services = createServices(createBackend())
  try {
    const token =
      command === 'create-namespace'
        ? await createNamespaceWithOwner(services, values.namespace, values.user)
        : await createUser(services, values.namespace, values.user)
    process.stdout.write(`${command === 'create-namespace' ? 'namespace' : 'user'} created; first personal token:\n${token}\n`)
    return 0
  } catch (error) {
    process.stderr.write(`${error instanceof DomainError ? error.message : String(error)}\n`)
    return 1
  } finally {
    await services.backend.close()
  }
}

main().then((code) => process.exit(code))
