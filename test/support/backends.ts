import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createBackend, type Backend } from '../../storage'
import { redisUrl, uniquePrefix } from './redis'

/** Both real drivers, for contract suites that must hold on each. */
export const BACKEND_KINDS = ['fs', 'redis'] as const
export type BackendKind = (typeof BACKEND_KINDS)[number]

export async function makeBackend(kind: BackendKind): Promise<Backend> {
  if (kind === 'redis') return createBackend({ redisUrl: await redisUrl(), redisPrefix: uniquePrefix() })
  return createBackend({ dataDir: mkdtempSync(join(tmpdir(), 'pf-store-')) })
}
