import { createHash } from 'node:crypto'
import { compareMaven } from '../../firewall/rules/versions/maven'
import type { ChecksumAlgorithm } from './paths'

const VERSIONS_BLOCK = /<versions>([\s\S]*?)<\/versions>/
const VERSION = /<version>\s*([^<\s]+)\s*<\/version>/g

const unescapeXml = (text: string) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&')
const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** The versions an artifact-level `maven-metadata.xml` lists, in document order. */
export function metadataVersions(xml: string): string[] {
  const block = VERSIONS_BLOCK.exec(xml)?.[1] ?? ''
  return [...block.matchAll(VERSION)].map((m) => unescapeXml(m[1]))
}

function setElement(xml: string, element: 'latest' | 'release', value: string | undefined): string {
  const pattern = new RegExp(`[ \\t]*<${element}>[^<]*</${element}>\\r?\\n?`)
  if (value === undefined) return xml.replace(pattern, '')
  if (pattern.test(xml))
    return xml.replace(new RegExp(`<${element}>[^<]*</${element}>`), `<${element}>${escapeXml(value)}</${element}>`)
  return xml.replace(/<versioning>/, `<versioning>\n    <${element}>${escapeXml(value)}</${element}>`)
}

/**
 * The same document listing exactly `versions` (document order of the original kept, new
 * ones appended), with `latest` the highest and `release` the highest non-SNAPSHOT by
 * Maven's ordering (removed when there is none). Everything else is left as written.
 * @example withVersions(xml, ['1.0']) // <versions><version>1.0</version></versions>, latest 1.0
 */
function withVersions(xml: string, versions: string[]): string {
  if (!VERSIONS_BLOCK.test(xml)) return xml
  const indent = /\n([ \t]*)<version>/.exec(VERSIONS_BLOCK.exec(xml)![1])?.[1] ?? '      '
  const closing = indent.length >= 2 ? indent.slice(2) : ''
  const body = versions.length
    ? `\n${versions.map((v) => `${indent}<version>${escapeXml(v)}</version>`).join('\n')}\n${closing}`
    : ''
  let next = xml.replace(VERSIONS_BLOCK, `<versions>${body}</versions>`)
  const sorted = [...versions].sort(compareMaven)
  next = setElement(next, 'latest', sorted.at(-1))
  next = setElement(next, 'release', sorted.filter((v) => !/-SNAPSHOT$/i.test(v)).at(-1))
  return next
}

/** Keeps the versions `keep` accepts (the `versions`-phase filter). */
export function filterMetadata(xml: string, keep: (version: string) => boolean): string {
  const versions = metadataVersions(xml)
  const kept = versions.filter(keep)
  return kept.length === versions.length ? xml : withVersions(xml, kept)
}

/**
 * Merges what a client deploys into what the repository holds: a client that read a
 * filtered document through the proxy must not erase versions it was not shown.
 */
export function mergeMetadata(incoming: string, stored: string | null): string {
  if (!stored) return incoming
  const mine = metadataVersions(incoming)
  const union = [...metadataVersions(stored), ...mine].filter((v, i, all) => all.indexOf(v) === i)
  return union.length === mine.length ? incoming : withVersions(incoming, union)
}

/** The hex digest Maven keeps in a `.md5`/`.sha1`/`.sha256`/`.sha512` file. */
export function checksumOf(bytes: Buffer | string, algorithm: ChecksumAlgorithm): string {
  return createHash(algorithm).update(bytes).digest('hex')
}
