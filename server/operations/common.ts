import { z } from 'zod'
import { ClientId } from '../common/ids'
import { HttpProblem } from '../http/problem'
import type { Firewall } from '../firewall/schema'

export const NsParams = z.object({ ns: ClientId })
export const FwParams = NsParams.extend({ fw: ClientId })

/** `?limit=&cursor=` of long lists. */
export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(200).optional(),
})

/** `If-Match: "<version>"` as a number; absent means unconditional. */
export function ifMatchVersion(headers: Record<string, string | string[] | undefined>): number | undefined {
  const raw = headers['if-match']
  if (raw === undefined) return undefined
  const value = Array.isArray(raw) ? raw[0] : raw
  if (value.trim() === '*') return undefined
  const match = /^\s*(?:W\/)?"?(\d+)"?\s*$/.exec(value)
  if (!match) throw new HttpProblem(400, 'invalid_if_match', 'If-Match must be a version in quotes, e.g. "3"')
  return Number(match[1])
}

export const etagOf = (firewall: Pick<Firewall, 'version'>) => ({ etag: `"${firewall.version}"` })

/** A `Link: <...>; rel="next"` header for the next page, keeping the other query parameters. */
export function nextLink(url: URL, nextCursor: string | null | undefined): Record<string, string> {
  if (!nextCursor) return {}
  const next = new URL(url.toString())
  next.searchParams.set('cursor', nextCursor)
  return { link: `<${next.pathname}${next.search}>; rel="next"` }
}
