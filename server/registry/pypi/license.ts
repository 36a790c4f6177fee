/** The license a PyPI release declares in its JSON API `info` (core metadata). */

const text = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : undefined)

/**
 * The declared license as rules read it: `license_expression` (PEP 639, SPDX), else `license`.
 * @example declaredLicense({ license_expression: 'MIT' }) // 'MIT'
 */
export function declaredLicense(info: Record<string, unknown>): string | undefined {
  return text(info.license_expression) ?? text(info.license)
}

/**
 * What a reviewer is shown: the declared license, else the `License ::` trove classifiers
 * (older packages declare only those), joined with OR. A `license` field holding a whole
 * license text is cut to its first line.
 * @example displayLicense({ classifiers: ['License :: OSI Approved :: MIT License'] }) // 'MIT License'
 */
export function displayLicense(info: Record<string, unknown>): string | undefined {
  const declared = declaredLicense(info)
  if (declared) {
    const first = declared.split('\n')[0].trim()
    return first.length > 120 ? `${first.slice(0, 117)}...` : first
  }
  const classifiers = Array.isArray(info.classifiers) ? info.classifiers : []
  const names = classifiers
    .filter((c): c is string => typeof c === 'string' && c.startsWith('License ::'))
    .map((c) => c.split('::').at(-1)!.trim())
    .filter((name) => name && name !== 'OSI Approved')
  return names.length ? names.join(' OR ') : undefined
}
