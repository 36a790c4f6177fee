import type { Backend } from '../backend'
import { keys } from './keys'

/**
 * The registry proxy's shared cache in storage: JSON packuments and raw tarball bytes. Callers
 * pass hashed key parts (names and scopes can be long or hold any character).
 */
export class RegistryCacheStore {
  constructor(private readonly backend: Pick<Backend, 'keyValue'>) {}

  getPackument<T>(scopeHash: string, nameHash: string): Promise<T | null> {
    return this.backend.keyValue.get<T>(keys.registryPackument(scopeHash, nameHash))
  }

  setPackument(scopeHash: string, nameHash: string, entry: unknown): Promise<void> {
    return this.backend.keyValue.set(keys.registryPackument(scopeHash, nameHash), entry)
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
