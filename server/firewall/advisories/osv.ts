import { z } from 'zod'
import { SEVERITIES, type Severity } from '../schema'
import { cvss3BaseScore, severityFromScore } from './cvss'
import type { AffectedPackage, AffectedRange, Advisory, RangeEvent } from './types'

// Lenient on purpose: OSV producers add fields freely; only what the firewall reads is checked.
const OsvRecordSchema = z.object({
  id: z.string().min(1),
  aliases: z.array(z.string()).optional(),
  summary: z.string().optional(),
  details: z.string().optional(),
  withdrawn: z.string().optional(),
  affected: z
    .array(
      z.object({
        package: z.object({ ecosystem: z.string(), name: z.string() }).optional(),
        ranges: z.array(z.object({ type: z.string(), events: z.array(z.record(z.string(), z.unknown())) })).optional(),
        versions: z.array(z.string()).optional(),
      }),
    )
    .optional(),
  severity: z.array(z.object({ type: z.string(), score: z.string() })).optional(),
  database_specific: z.record(z.string(), z.unknown()).optional(),
})

/** Outcome of parsing one record: data, never an exception. */
export type OsvParseResult =
  | { kind: 'advisory'; advisory: Advisory }
  | { kind: 'withdrawn'; id: string }
  | { kind: 'invalid'; error: string }

const EVENT_KEYS = ['introduced', 'fixed', 'last_affected', 'limit'] as const

function toEvents(events: Record<string, unknown>[]): RangeEvent[] {
  const out: RangeEvent[] = []
  for (const event of events) {
    const key = EVENT_KEYS.find((k) => typeof event[k] === 'string')
    if (key) out.push({ [key]: event[key] as string } as RangeEvent)
  }
  return out
}

function toAffected(record: z.infer<typeof OsvRecordSchema>): AffectedPackage[] {
  const out: AffectedPackage[] = []
  for (const entry of record.affected ?? []) {
    if (!entry.package) continue
    const ranges: AffectedRange[] = (entry.ranges ?? [])
      // GIT ranges name commits, which a registry request never carries.
      .filter((range) => range.type === 'SEMVER' || range.type === 'ECOSYSTEM')
      .map((range) => ({ type: range.type as AffectedRange['type'], events: toEvents(range.events) }))
    out.push({ ecosystem: entry.package.ecosystem, name: entry.package.name, ranges, versions: entry.versions ?? [] })
  }
  return out
}

/** GitHub writes LOW/MODERATE/HIGH/CRITICAL; some databases write MEDIUM. */
function databaseSeverity(value: unknown): Severity | undefined {
  if (typeof value !== 'string') return undefined
  const lowered = value.toLowerCase()
  if (lowered === 'medium') return 'moderate'
  return (SEVERITIES as readonly string[]).includes(lowered) ? (lowered as Severity) : undefined
}

/**
 * Parses one OSV record (https://ossf.github.io/osv-schema/). Records whose id starts with
 * `MAL-` are malicious-package reports; withdrawn records are reported as such, not indexed.
 * @example parseOsvRecord({ id: 'MAL-2024-1', affected: [...] }).kind // 'advisory'
 */
export function parseOsvRecord(raw: unknown): OsvParseResult {
  const parsed = OsvRecordSchema.safeParse(raw)
  if (!parsed.success) {
    const id = typeof (raw as { id?: unknown })?.id === 'string' ? ` ${(raw as { id: string }).id}` : ''
    return { kind: 'invalid', error: `invalid OSV record${id}: ${parsed.error.issues[0]?.message ?? 'bad shape'}` }
  }
  const record = parsed.data
  if (record.withdrawn) return { kind: 'withdrawn', id: record.id }

  const vector = record.severity?.find((s) => s.type === 'CVSS_V3')?.score
  const score = vector ? cvss3BaseScore(vector) : null
  const severity = databaseSeverity(record.database_specific?.severity) ?? (score !== null ? severityFromScore(score) : undefined)
  const summary = record.summary ?? record.details?.split('\n')[0]

  const advisory: Advisory = {
    id: record.id,
    aliases: record.aliases ?? [],
    malware: record.id.startsWith('MAL-'),
    affected: toAffected(record),
    ...(summary ? { summary } : {}),
    ...(severity ? { severity } : {}),
    ...(score !== null ? { cvss: score, cvssVector: vector } : {}),
  }
  return { kind: 'advisory', advisory }
}
