import { chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { DomainError } from '../common/errors'
import { createNamespaceWithOwner } from '../namespace/directory'
import { generateToken } from '../auth/tokens'
import type { Services } from './services'
import { logger } from './logger'

/**
 * First start on empty storage: create the bootstrap namespace and owner. With
 * BOOTSTRAP_TOKEN the owner's token is exactly that; otherwise one is generated, printed
 * once and written to `<data dir>/bootstrap-token` (mode 0600).
 */
export async function bootstrap(services: Services): Promise<void> {
  if (!(await services.namespaces.isEmpty())) return
  const { token, namespace, user } = services.config.bootstrap
  const material = token ?? generateToken('personal')
  try {
    await createNamespaceWithOwner(services, namespace, user, material, 'bootstrap')
  } catch (error) {
    // Another process sharing the same Redis bootstrapped first: nothing to do.
    if (error instanceof DomainError && error.code === 'namespace_exists') return
    throw error
  }
  logger.info('bootstrap namespace created', { namespace, user })
  if (token) return
  const dir = resolve(services.config.dataDir)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const file = join(dir, 'bootstrap-token')
  writeFileSync(file, material + '\n', { mode: 0o600 })
  chmodSync(file, 0o600)
  process.stdout.write(
    `\nBootstrap: namespace "${namespace}", owner "${user}". Personal access token (shown once, also in ${file}):\n${material}\n\n`,
  )
}
