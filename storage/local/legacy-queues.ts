import type { LegacyQueueReader } from '../ports'
import type { LocalValues } from './values'

/** Queues of the old layout as one process stored them: one key per item, `queue:<name>:<slot>`. */
export class LocalLegacyQueues implements LegacyQueueReader {
  constructor(private readonly values: LocalValues) {}

  async items<T>(queue: string): Promise<T[]> {
    const prefix = `queue:${queue}`
    const slots = (await this.values.storage.getKeys(prefix))
      .map((key) => key.slice(prefix.length + 1))
      .filter((slot) => /^\d+$/.test(slot))
      .sort()
    return (await this.values.getMany<T>(slots.map((slot) => `${prefix}:${slot}`))).filter((item) => item !== null)
  }
}
