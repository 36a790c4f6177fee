import type { Backend } from '../backend'
import { keys } from './keys'

/**
 * The registry proxy's shared cache in storage: packuments and tarballs, both as bytes (a
 * packument of up to 64 MB is never turned into one JSON value here; server/registry/cache.ts
 * encodes it). Callers pass hashed key parts (names and scopes can be long or hold any character).
 */
export class RegistryCacheStore {
  constructor(private readonly backend: Pick<Backend, 'keyValue'>) {}

  getPackument(scopeHash: string, nameHash: string): Promise<Buffer | null> {
    return this.backend.keyValue.getBytes(keys.registryPackument(scopeHash, nameHash))
  }

  setPackument(scopeHash: string, nameHash: string, entry: Uint8Array): Promise<void> {
    return this.backend.keyValue.setBytes(keys.registryPackument(scopeHash, nameHash), entry)
  }

  deletePackument(scopeHash: string, nameHash: string): Promise<void> {
    return this.backend.keyValue.delete(keys.registryPackument(scopeHash, nameHash))
  }

  getTarball(integrityHash: string): Promise<Buffer | null> {
    return this.backend.keyValue.getBytes(keys.registryTarball(integrityHash))
  }

  setTarball(integrityHash: string, bytes: Uint8Array): Promise<void> {
    return this.backend.keyValue.setBytes(keys.registryTarball(integrityHash), bytes)
  }
}
