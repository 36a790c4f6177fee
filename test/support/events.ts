import type { Backend } from '../../storage'
import { backendOfEnv } from './backends'
import type { NamespaceEvent } from '../../server/events/schemas'
import { keys } from '../../storage/repositories/keys'
import type { RunningServer } from './server'

/** A backend on the same storage as a running server (fs data dir, Redis or cluster prefix). */
export function backendOf(server: RunningServer): Promise<Backend> {
  return backendOfEnv(server.env)
}

/** Every event in the event log of namespace `ns` (the bootstrap one by default), oldest first. */
export async function readEvents(server: RunningServer, ns = 'default'): Promise<NamespaceEvent[]> {
  const backend = await backendOf(server)
  try {
    const events: NamespaceEvent[] = []
    let after: string | null = null
    for (;;) {
      const page: { cursor: string; value: NamespaceEvent }[] = await backend.logs.range<NamespaceEvent>(
        keys.eventLog(ns),
        { after, limit: 1000 },
      )
      if (page.length === 0) return events
      events.push(...page.map((entry) => entry.value))
      after = page[page.length - 1].cursor
    }
  } finally {
    await backend.close()
  }
}
