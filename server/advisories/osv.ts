import { z } from 'zod'
import { SEVERITIES, type Severity } from '../firewall/schema'
import { cvss3BaseScore, severityFromScore } from './cvss'
import type { AffectedPackage, AffectedRange, Advisory, RangeEvent } from './types'

const EVENT_KEYS = ['introduced', 'fixed', 'last_affected', 'limit'] as const

// One event names exactly one of the four kinds (osv-schema "events"); anything else is a bad record.
const OsvEvent = z
  .record(z.string(), z.unknown())
  .refine(
    (event) => EVENT_KEYS.filter((key) => typeof event[key] === 'string' && event[key] !== '').length === 1,
    'an event must name exactly one of introduced, fixed, last_affected, limit',
  )

const OsvRange = z
  .object({ type: z.string().min(1), events: z.array(OsvEvent).min(1) })
  // A SEMVER or ECOSYSTEM range without `introduced` affects nothing: the record is malformed.
  .refine(
    (range) =>
      !['SEMVER', 'ECOSYSTEM'].includes(range.type) || range.events.some((e) => typeof e.introduced === 'string'),
    'a SEMVER or ECOSYSTEM range needs an introduced event',
  )

// Lenient on fields the firewall does not read (producers add them freely), strict on the rest.
const OsvRecordSchema = z.object({
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'id must be a plain OSV id'),
  aliases: z.array(z.string()).optional(),
  summary: z.string().optional(),
  details: z.string().optional(),
  withdrawn: z.string().optional(),
  affected: z
    .array(
      z.object({
        package: z.object({ ecosystem: z.string().min(1), name: z.string().min(1) }).optional(),
        ranges: z.array(OsvRange).optional(),
        versions: z.array(z.string()).optional(),
      }),
    )
    .optional(),
  severity: z.array(z.object({ type: z.string(), score: z.string() })).optional(),
  database_specific: z.record(z.string(), z.unknown()).optional(),
})

/** Outcome of parsing one record: data, never an exception. */
type OsvParseResult =
  { kind: 'advisory'; advisory: Advisory } | { kind: 'withdrawn'; id: string } | { kind: 'invalid'; error: string }

/** Summaries are shown in block messages and outputs; a runaway one is cut. */
const SUMMARY_MAX = 300

// A feed holds 200,000 records, most of them malware reports of the same shape ("every version"):
// the parts they share are one frozen object each, which keeps the index a fraction of its size.
const NONE: readonly never[] = Object.freeze([])
const FROM_ZERO: readonly RangeEvent[] = Object.freeze([Object.freeze({ introduced: '0' })])
const EVERY_VERSION = new Map<AffectedRange['type'], readonly AffectedRange[]>(
  (['SEMVER', 'ECOSYSTEM'] as const).map((type) => [type, Object.freeze([Object.freeze({ type, events: FROM_ZERO })])]),
)
const ECOSYSTEM_NAMES = new Map(['npm', 'PyPI', 'Maven', 'NuGet'].map((name) => [name, name]))

function toEvents(events: Record<string, unknown>[]): RangeEvent[] {
  const out: RangeEvent[] = []
  for (const event of events) {
    const key = EVENT_KEYS.find((k) => typeof event[k] === 'string')
    if (key) out.push({ [key]: event[key] as string } as RangeEvent)
  }
  return out
}

function toRanges(ranges: z.infer<typeof OsvRange>[]): readonly AffectedRange[] {
  // GIT ranges name commits, which a registry request never carries.
  const kept = ranges.filter((range) => range.type === 'SEMVER' || range.type === 'ECOSYSTEM')
  if (kept.length === 0) return NONE
  const only = kept[0]
  if (kept.length === 1 && only.events.length === 1 && only.events[0].introduced === '0') {
    return EVERY_VERSION.get(only.type as AffectedRange['type'])!
  }
  return kept.map((range) => ({ type: range.type as AffectedRange['type'], events: toEvents(range.events) }))
}

function toAffected(record: z.infer<typeof OsvRecordSchema>): AffectedPackage[] {
  const out: AffectedPackage[] = []
  for (const entry of record.affected ?? []) {
    if (!entry.package) continue
    const ecosystem = ECOSYSTEM_NAMES.get(entry.package.ecosystem) ?? entry.package.ecosystem
    const versions = entry.versions?.length ? entry.versions : NONE
    out.push({ ecosystem, name: entry.package.name, ranges: toRanges(entry.ranges ?? []), versions })
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

function issueText(error: z.ZodError): string {
  const issue = error.issues[0]
  if (!issue) return 'bad shape'
  return issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message
}

/**
 * Parses one OSV record (https://ossf.github.io/osv-schema/). Records whose id starts with
 * `MAL-` are malicious-package reports; withdrawn records are reported as such, not indexed.
 * A record with a malformed id, package, range, event or severity is `invalid`.
 * @example parseOsvRecord({ id: 'MAL-2024-1', affected: [...] }).kind // 'advisory'
 */
export function parseOsvRecord(raw: unknown): OsvParseResult {
  const parsed = OsvRecordSchema.safeParse(raw)
  if (!parsed.success) {
    const rawId = (raw as { id?: unknown } | null)?.id
    const id = typeof rawId === 'string' ? ` ${rawId.slice(0, 128)}` : ''
    return { kind: 'invalid', error: `invalid OSV record${id}: ${issueText(parsed.error)}` }
  }
  const record = parsed.data
  if (record.withdrawn) return { kind: 'withdrawn', id: record.id }

  const vector = record.severity?.find((s) => s.type === 'CVSS_V3')?.score
  const score = vector ? cvss3BaseScore(vector) : null
  const severity =
    databaseSeverity(record.database_specific?.severity) ?? (score !== null ? severityFromScore(score) : undefined)
  const summary = (record.summary || record.details?.split('\n')[0])?.slice(0, SUMMARY_MAX)

  const advisory: Advisory = {
    id: record.id,
    aliases: record.aliases?.length ? record.aliases : NONE,
    malware: record.id.startsWith('MAL-'),
    affected: toAffected(record),
    ...(summary ? { summary } : {}),
    ...(severity ? { severity } : {}),
    ...(score !== null ? { cvss: score, cvssVector: vector } : {}),
  }
  return { kind: 'advisory', advisory }
}
