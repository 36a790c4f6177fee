import { createHash } from 'node:crypto'
import { compareMaven } from '../../firewall/rules/versions/maven'
import { TimeSlice } from '../../common/time-slice'
import type { ChecksumAlgorithm } from './paths'

const VERSION = /<version>\s*([^<\s]+)\s*<\/version>/g

/**
 * Where the first `<versions>` block's content starts and ends (null without one), found by two
 * forward searches: a lazy `<versions>([\s\S]*?)</versions>` rescans the rest of the document from
 * every `<versions>` left open, quadratic in a 64 MB upstream answer.
 */
function versionsBlock(xml: string): { from: number; to: number } | null {
  const open = xml.indexOf('<versions>')
  if (open < 0) return null
  const to = xml.indexOf('</versions>', open)
  return to < 0 ? null : { from: open + '<versions>'.length, to }
}

/** An upstream's maven-metadata.xml listing more versions than `limit`. */
export class TooManyVersions extends Error {
  constructor(readonly limit: number) {
    super(`maven-metadata.xml lists more than ${limit} versions`)
  }
}

/**
 * The highest of `versions` by Maven's ordering, in one pass (a sort compared n log n times);
 * of equal ones ("1.0", "1.0.0") the last, as the sort's last was.
 */
function highest(versions: Iterable<string>): string | undefined {
  let best: string | undefined
  for (const version of versions) if (best === undefined || compareMaven(version, best) >= 0) best = version
  return best
}

const unescapeXml = (text: string) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&')
const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/**
 * The versions an artifact-level `maven-metadata.xml` lists, in document order.
 * @throws TooManyVersions past `limit` (an upstream's document: UPSTREAM_MAX_MEMBERS)
 */
export function metadataVersions(xml: string, limit = Number.POSITIVE_INFINITY): string[] {
  const block = versionsBlock(xml)
  if (!block) return []
  const versions: string[] = []
  const version = new RegExp(VERSION.source, VERSION.flags)
  version.lastIndex = block.from
  for (let m = version.exec(xml); m && m.index < block.to; m = version.exec(xml)) {
    if (m.index + m[0].length > block.to) break
    if (versions.length === limit) throw new TooManyVersions(limit)
    versions.push(unescapeXml(m[1]))
  }
  return versions
}

/**
 * Sets (or, for undefined, removes with its line's indentation and newline) the first
 * `<latest>`/`<release>` element, found by forward searches: a pattern starting with `[ \t]*`
 * retries from every blank of a long run of them (quadratic on an upstream's document).
 */
function setElement(xml: string, element: 'latest' | 'release', value: string | undefined): string {
  const open = `<${element}>`
  const close = `</${element}>`
  let from = xml.indexOf(open)
  let to = from < 0 ? -1 : xml.indexOf(close, from)
  // `[^<]*` between the tags, as before: anything else is not this element.
  if (to >= 0 && xml.lastIndexOf('<', to - 1) !== from) from = to = -1
  if (value === undefined) {
    if (from < 0) return xml
    let start = from
    while (start > 0 && (xml[start - 1] === ' ' || xml[start - 1] === '\t')) start--
    let end = to + close.length
    if (xml[end] === '\r' && xml[end + 1] === '\n') end += 2
    else if (xml[end] === '\n') end += 1
    return xml.slice(0, start) + xml.slice(end)
  }
  if (from >= 0) return `${xml.slice(0, from)}${open}${escapeXml(value)}${xml.slice(to)}`
  return xml.replace('<versioning>', () => `<versioning>\n    ${open}${escapeXml(value)}${close}`)
}

/**
 * The same document listing exactly `versions` (document order of the original kept, new
 * ones appended), with `latest` the highest and `release` the highest non-SNAPSHOT by
 * Maven's ordering (removed when there is none). Everything else is left as written.
 * @example withVersions(xml, ['1.0']) // <versions><version>1.0</version></versions>, latest 1.0
 */
function withVersions(xml: string, versions: string[]): string {
  const block = versionsBlock(xml)
  if (!block) return xml
  const indent = /\n([ \t]*)<version>/.exec(xml.slice(block.from, block.to))?.[1] ?? '      '
  const closing = indent.length >= 2 ? indent.slice(2) : ''
  const body = versions.length
    ? `\n${versions.map((v) => `${indent}<version>${escapeXml(v)}</version>`).join('\n')}\n${closing}`
    : ''
  let next = xml.slice(0, block.from) + body + xml.slice(block.to)
  next = setElement(next, 'latest', highest(versions))
  next = setElement(next, 'release', highest(versions.filter((v) => !/-SNAPSHOT$/i.test(v))))
  return next
}

/**
 * Keeps the versions `keep` accepts (the `versions`-phase filter), judging them in turns.
 * @throws TooManyVersions past `limit`
 */
export async function filterMetadata(
  xml: string,
  keep: (version: string) => boolean,
  limit = Number.POSITIVE_INFINITY,
  slice = new TimeSlice(),
): Promise<string> {
  const versions = metadataVersions(xml, limit)
  const kept: string[] = []
  for (let i = 0; i < versions.length; i++) {
    if (keep(versions[i])) kept.push(versions[i])
    if ((i & 255) === 255) await slice.step()
  }
  return kept.length === versions.length ? xml : withVersions(xml, kept)
}

/**
 * Merges what a client deploys into what the repository holds: a client that read a
 * filtered document through the proxy must not erase versions it was not shown.
 */
export function mergeMetadata(incoming: string, stored: string | null): string {
  if (!stored) return incoming
  const mine = metadataVersions(incoming)
  // A Set: indexOf over the list for each version was quadratic in what a client deploys.
  const union = [...new Set([...metadataVersions(stored), ...mine])]
  return union.length === mine.length ? incoming : withVersions(incoming, union)
}

/** The hex digest Maven keeps in a `.md5`/`.sha1`/`.sha256`/`.sha512` file. */
export function checksumOf(bytes: Buffer | string, algorithm: ChecksumAlgorithm): string {
  return createHash(algorithm).update(bytes).digest('hex')
}
