/**
 * Inventory benchmark (issue 28), on one Redis (REDIS_URL, else a private redis-server):
 *
 * 1. Added cost per download: `recordDecision` (the registry's decision path: firewall log entry
 *    written to Redis, and the inventory note) timed call by call, with the real inventory recorder
 *    (flushing every second, as in the service) and with no inventory, in alternating rounds of the
 *    same run. Prints p50 and p99 of both and the difference.
 * 2. Exposure match: an inventory of 100,000 served versions across 100 firewalls, then a refresh
 *    of 1,000 changed advisories (half naming served packages) matched with `ExposureDetector.detect`.
 * 3. Storage bytes per inventory entry: the JSON stored under the inventory keys, per served version.
 *
 *   npm run bench:inventory [-- --downloads 20000 --firewalls 100 --versions 1000 --advisories 1000]
 */
import { parseArgs } from 'node:util'
import { createServices } from '../server/app/services'
import { configFromEnv } from '../server/app/config'
import { recordDecision, type DecisionRecord } from '../server/registry/decision-recorder'
import type { InventoryNotes } from '../server/inventory/recorder'
import { ExposureDetector } from '../server/exposures/detector'
import type { Advisory } from '../server/advisories/types'
import type { InventoryAddition } from '../storage/repositories/inventory'
import { RedisBackend } from '../storage/redis-backend'
import { redisUrl, uniquePrefix } from '../test/support/redis'

const { values: args } = parseArgs({
  options: {
    downloads: { type: 'string', default: '20000' },
    firewalls: { type: 'string', default: '100' },
    versions: { type: 'string', default: '1000' },
    advisories: { type: 'string', default: '1000' },
  },
})
const DOWNLOADS = Number(args.downloads)
const FIREWALLS = Number(args.firewalls)
const VERSIONS_PER_FIREWALL = Number(args.versions)
const ADVISORIES = Number(args.advisories)
const NS = 'bench'
const ROUND = 500

process.env.LOG_LEVEL ??= 'warn'

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]
const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`

function download(i: number): DecisionRecord {
  return {
    ns: NS,
    firewall: { id: 'web', version: 1 } as DecisionRecord['firewall'],
    phase: 'download',
    decision: {
      outcome: 'allowed',
      firewall: 'web',
      firewallVersion: 1,
      message: 'allowed',
    } as DecisionRecord['decision'],
    facts: {
      ecosystem: 'npm',
      packageName: `package-${i % 2000}`,
      version: `1.${i % 20}.0`,
    } as DecisionRecord['facts'],
    upstream: 'npmjs',
    principal: {
      type: 'user',
      id: `ci-${i % 12}`,
      namespace: NS,
      tokenId: 't',
      tokenIdentifier: 'x',
      teams: [],
      grants: [],
    } as unknown as DecisionRecord['principal'],
    meta: { requestId: `req-${i}`, userAgent: 'npm/10', remoteAddress: '10.0.0.1' } as DecisionRecord['meta'],
  }
}

async function downloadCost(services: ReturnType<typeof createServices>): Promise<void> {
  const none: InventoryNotes = { served: () => undefined }
  const withInventory: number[] = []
  const without: number[] = []
  let i = 0
  while (i < DOWNLOADS) {
    for (const [samples, inventory] of [
      [withInventory, services.inventory],
      [without, none],
    ] as const) {
      const ports = { clock: services.clock, events: services.events, inventory }
      for (let n = 0; n < ROUND; n++, i++) {
        const started = performance.now()
        await recordDecision(ports, download(i))
        samples.push(performance.now() - started)
      }
    }
  }
  await services.inventory.flush()
  const a = withInventory.sort((x, y) => x - y)
  const b = without.sort((x, y) => x - y)
  console.log(`downloads: ${a.length} with inventory, ${b.length} without (alternating rounds of ${ROUND})`)
  console.log(
    `  p50: ${us(percentile(a, 0.5))} with, ${us(percentile(b, 0.5))} without, added ${us(percentile(a, 0.5) - percentile(b, 0.5))}`,
  )
  console.log(
    `  p99: ${us(percentile(a, 0.99))} with, ${us(percentile(b, 0.99))} without, added ${us(percentile(a, 0.99) - percentile(b, 0.99))}`,
  )
}

async function fillInventory(services: ReturnType<typeof createServices>): Promise<number> {
  const packages = (FIREWALLS * VERSIONS_PER_FIREWALL) / 5
  let total = 0
  for (let f = 0; f < FIREWALLS; f++) {
    const additions: InventoryAddition[] = []
    for (let i = 0; i < VERSIONS_PER_FIREWALL; i++) {
      const name = `pkg-${(f * 200 + i) % packages}`
      additions.push({
        firewall: `fw-${f}`,
        ecosystem: 'npm',
        packageName: name,
        nameKey: name,
        version: `1.0.${f % 5}`,
        firstServedAt: 1_000,
        lastServedAt: 2_000 + i,
        count: 1 + (i % 7),
        servedTo: [`user-${i % 40}`, `ci-${f % 8}`],
      })
    }
    await services.inventoryStore.merge(NS, additions)
    total += additions.length
  }
  return total
}

function advisories(): Advisory[] {
  const packages = (FIREWALLS * VERSIONS_PER_FIREWALL) / 5
  return Array.from({ length: ADVISORIES }, (_, i) => ({
    id: `MAL-2099-${i}`,
    aliases: [],
    malware: true,
    affected: [
      {
        ecosystem: 'npm',
        // Half name served packages, half packages nobody served.
        name: i % 2 === 0 ? `pkg-${(i * 37) % packages}` : `never-${i}`,
        ranges: [{ type: 'SEMVER' as const, events: [{ introduced: '0' }] }],
        versions: [],
      },
    ],
  }))
}

async function storedBytes(backend: RedisBackend): Promise<number> {
  const prefix = `ns:{${NS}}:inv`
  const found = (await backend.keyValue.keys(prefix)).filter((key) => key.startsWith(prefix))
  let bytes = 0
  for (let start = 0; start < found.length; start += 500) {
    const values = await backend.keyValue.getMany(found.slice(start, start + 500))
    for (const value of values) bytes += Buffer.byteLength(JSON.stringify(value))
  }
  return bytes
}

async function main() {
  const prefix = uniquePrefix('bench-inventory')
  const backend = new RedisBackend(await redisUrl(), prefix)
  const services = createServices(backend, { config: configFromEnv() })
  await services.namespaces.create({ id: NS, owner: 'owner', createdAt: new Date().toISOString() } as never)
  try {
    await downloadCost(services)

    const filled = Date.now()
    const versions = await fillInventory(services)
    console.log(
      `inventory: ${versions} served versions across ${FIREWALLS} firewalls written in ${Date.now() - filled} ms`,
    )
    const bytes = await storedBytes(backend)
    console.log(
      `storage: ${(bytes / versions).toFixed(1)} bytes per inventory entry (JSON stored under the inventory keys, ${bytes} bytes)`,
    )

    const detector = new ExposureDetector(services)
    const changed = advisories()
    const started = performance.now()
    const found = await detector.detect(changed)
    const ms = performance.now() - started
    console.log(
      `match: ${changed.length} changed advisories against ${versions} versions in ${ms.toFixed(0)} ms, ${found.length} exposures stored (with their events)`,
    )
    const again = performance.now()
    const twice = await detector.detect(changed)
    console.log(
      `match again (same refresh): ${(performance.now() - again).toFixed(0)} ms, ${twice.length} new exposures`,
    )
  } finally {
    await services.inventory.close()
    // The bench's keys go with it.
    const stored = await backend.redis.keys(`${prefix}:*`)
    for (let start = 0; start < stored.length; start += 1000)
      await backend.redis.del(...stored.slice(start, start + 1000))
    await backend.close()
  }
}

await main()
