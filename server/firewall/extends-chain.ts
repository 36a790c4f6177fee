import type { Firewall } from './schema'

/** Does `from` (through its extends) reach `target`? */
export function reaches(all: Map<string, Firewall>, from: string, target: string, seen = new Set<string>()): boolean {
  if (from === target) return true
  if (seen.has(from)) return false
  seen.add(from)
  return (all.get(from)?.extends ?? []).some((next) => reaches(all, next, target, seen))
}

/** A firewall and its bases, depth-first, each once. */
export function chainOf(all: Map<string, Firewall>, id: string, seen = new Set<string>()): Firewall[] {
  const fw = all.get(id)
  if (!fw || seen.has(id)) return []
  seen.add(id)
  return [fw, ...fw.extends.flatMap((baseId) => chainOf(all, baseId, seen))]
}
