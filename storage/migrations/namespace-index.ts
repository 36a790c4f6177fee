import type { Backend } from '../backend'
import { keys } from '../repositories/keys'
import { addToNamespaceIndex } from '../repositories/namespaces'

/**
 * Layout 3 -> 4: namespaces are listed from an index instead of a scan of every namespace key
 * (which grew with delivery records, metric buckets and cached documents). Builds the index from
 * one last scan; idempotent. Returns how many ids it entered.
 */
export async function indexNamespaces(backend: Backend): Promise<number> {
  const found = (await backend.keyValue.keys(keys.namespacePrefix)).flatMap((key) => keys.namespaceOfMetaKey(key) ?? [])
  return found.length === 0 ? 0 : addToNamespaceIndex(backend, found)
}
