import { parseDuration, parseDurationList } from '../../common/duration'
import { normalizeCidr } from '../../net/address-policy'

/** Operator settings for webhook delivery, already parsed. */
export interface WebhookSettings {
  /** Delays before retries 2..n; attempts per batch = length + 1. */
  retryScheduleMs: number[]
  attemptTimeoutMs: number
  quarantineMs: number
  secretOverlapMs: number
  /** Deliveries per second per webhook. */
  rate: number
  /** Events buffered per webhook. */
  bufferSize: number
  /** CIDRs exempt from the public-address rule, as written (normalised). */
  allowedNetworks: string[]
  /** Lower-case hostnames refused (with their subdomains). */
  rejectedDomains: string[]
  /** Lease time: another process takes over a dead owner's webhooks within this. */
  leaseMs: number
}

/** Raised for any invalid setting; the message names the variable and the value. */
export class WebhookSettingsError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`)
    this.name = 'WebhookSettingsError'
  }
}

type Env = Record<string, string | undefined>

/** Values the spec prescribes when the operator sets nothing. */
export const DEFAULT_WEBHOOK_ENV = {
  WEBHOOK_RETRY_SCHEDULE: '30s,2m,10m,30m,1h',
  WEBHOOK_ATTEMPT_TIMEOUT: '10s',
  WEBHOOK_QUARANTINE: '24h',
  WEBHOOK_SECRET_OVERLAP: '24h',
  WEBHOOK_RATE: '5',
  WEBHOOK_BUFFER: '5000',
  WEBHOOK_LEASE: '10s',
} as const

/**
 * Parses the webhook settings from an env object (pure: the composition root passes the environment).
 * Empty strings count as unset.
 * @example parseWebhookSettings({ WEBHOOK_RATE: '2' }).rate // 2
 */
export function parseWebhookSettings(env: Env = {}): WebhookSettings {
  const read = (name: keyof typeof DEFAULT_WEBHOOK_ENV) => {
    const value = env[name]?.trim()
    return value ? value : DEFAULT_WEBHOOK_ENV[name]
  }
  return {
    retryScheduleMs: guard('WEBHOOK_RETRY_SCHEDULE', () => parseDurationList(read('WEBHOOK_RETRY_SCHEDULE'))),
    attemptTimeoutMs: positiveDuration('WEBHOOK_ATTEMPT_TIMEOUT', read('WEBHOOK_ATTEMPT_TIMEOUT')),
    quarantineMs: guard('WEBHOOK_QUARANTINE', () => parseDuration(read('WEBHOOK_QUARANTINE'))),
    secretOverlapMs: guard('WEBHOOK_SECRET_OVERLAP', () => parseDuration(read('WEBHOOK_SECRET_OVERLAP'))),
    rate: positiveInteger('WEBHOOK_RATE', read('WEBHOOK_RATE')),
    bufferSize: positiveInteger('WEBHOOK_BUFFER', read('WEBHOOK_BUFFER')),
    allowedNetworks: list(env.WEBHOOK_ALLOWED_NETWORKS).map((cidr) => parseCidr(cidr)),
    rejectedDomains: list(env.WEBHOOK_REJECTED_DOMAINS).map((domain) => parseDomain(domain)),
    leaseMs: positiveDuration('WEBHOOK_LEASE', read('WEBHOOK_LEASE')),
  }
}

function guard<T>(variable: string, parse: () => T): T {
  try {
    return parse()
  } catch (error) {
    throw new WebhookSettingsError(variable, (error as Error).message)
  }
}

function positiveDuration(variable: string, text: string): number {
  const ms = guard(variable, () => parseDuration(text))
  if (ms <= 0) throw new WebhookSettingsError(variable, `must be greater than zero, got "${text}"`)
  return ms
}

function positiveInteger(variable: string, text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) {
    throw new WebhookSettingsError(variable, `expected a positive integer, got "${text}"`)
  }
  return Number(text)
}

function list(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
}

function parseCidr(text: string): string {
  const cidr = normalizeCidr(text)
  if (!cidr) throw new WebhookSettingsError('WEBHOOK_ALLOWED_NETWORKS', `invalid CIDR "${text}"`)
  return cidr
}

function parseDomain(text: string): string {
  const domain = text.toLowerCase().replace(/^\*\./, '').replace(/\.$/, '')
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(domain)) {
    throw new WebhookSettingsError('WEBHOOK_REJECTED_DOMAINS', `invalid hostname "${text}"`)
  }
  return domain
}
