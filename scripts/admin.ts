/**
 * Admin CLI on the same storage as the service (same env):
 *   npm run admin -- create-namespace --namespace <ns> --user <id>
 *   npm run admin -- create-user --namespace <ns> --user <id>
 *   npm run admin -- rotate-secrets-key
 *   npm run admin -- advisories sync|status [--ecosystem npm] [--file all.zip]
 * The first two print the new user's first personal token alone on the last line of stdout;
 * rotate-secrets-key re-encrypts every stored secret with SECRETS_KEY and prints the count.
 */
import { parseArgs } from 'node:util'
import { createBackend } from '../storage'
import { createServices } from '../server/app/services'
import { createNamespaceWithOwner, createUser } from '../server/namespace/directory'
import { DomainError } from '../server/common/errors'
import { rotateSecretsKey } from '../storage/secrets/rotate'
import { ADVISORIES_USAGE, advisoriesCommand } from './admin-advisories'

const USAGE = `usage: npm run admin -- create-namespace|create-user --namespace <ns> --user <id>\n       npm run admin -- rotate-secrets-key\n       ${ADVISORIES_USAGE}`

async function rotate(): Promise<number> {
  // A composition root like the start-up plugin: re-sealing walks storage itself, below the repositories.
  const backend = createBackend()
  const { secrets: box } = createServices(backend)
  try {
    const { secrets, records, keyId } = await rotateSecretsKey(backend, box)
    process.stdout.write(`re-encrypted ${secrets} secrets in ${records} records with key id ${keyId}\n${secrets}\n`)
    return 0
  } finally {
    await backend.close()
  }
}

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { namespace: { type: 'string' }, user: { type: 'string' }, ecosystem: { type: 'string' }, file: { type: 'string' } },
  })
  const [command] = positionals
  if (command === 'rotate-secrets-key') return rotate()
  if (command === 'advisories') return advisoriesCommand(positionals[1], values)
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
    await services.storage.close()
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    // A malformed SECRETS_KEY or one that does not match storage: the message names the setting, never a key.
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  },
)
