/**
 * NuGet versions (SemVer 2.0 plus NuGet's optional fourth number; see
 * https://learn.microsoft.com/nuget/concepts/package-versioning): parsing, normalisation
 * (the form flat-container paths use) and ordering; build metadata is ignored.
 */
interface NuGetVersion {
  numbers: [number, number, number, number]
  prerelease: string[]
}

const PATTERN =
  /^\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?\s*$/

/**
 * Parses a NuGet version; null when it is not one.
 * @example parseNuGet('1.0.0-RC.1+abc')?.prerelease // ['RC', '1']
 */
export function parseNuGet(text: string): NuGetVersion | null {
  const m = PATTERN.exec(text)
  if (!m) return null
  const numbers = [m[1], m[2], m[3], m[4]].map((n) => Number(n ?? 0)) as NuGetVersion['numbers']
  return { numbers, prerelease: m[5] ? m[5].split('.') : [] }
}

/**
 * NuGet's normalised form: three numbers (a fourth only when not zero), pre-release labels
 * kept, build metadata dropped. Flat-container URLs use it lower-cased.
 * @example normalizeNuGet('1.0.0.0-Beta+sha') // '1.0.0-Beta'
 */
export function normalizeNuGet(text: string): string | null {
  const v = parseNuGet(text)
  if (!v) return null
  const [a, b, c, d] = v.numbers
  return `${a}.${b}.${c}${d ? `.${d}` : ''}${v.prerelease.length ? `-${v.prerelease.join('.')}` : ''}`
}

function compareLabel(x: string, y: string): number {
  const [xn, yn] = [/^\d+$/.test(x), /^\d+$/.test(y)]
  if (xn && yn) return Math.sign(Number(x) - Number(y))
  if (xn !== yn) return xn ? -1 : 1
  // NuGet compares labels case-insensitively (ordinal).
  const [a, b] = [x.toLowerCase(), y.toLowerCase()]
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * NuGet ordering of two parsed versions.
 * @example compareNuGet(parseNuGet('1.0.0-beta')!, parseNuGet('1.0.0')!) // -1
 */
export function compareNuGet(a: NuGetVersion, b: NuGetVersion): number {
  for (let i = 0; i < 4; i++) if (a.numbers[i] !== b.numbers[i]) return a.numbers[i] < b.numbers[i] ? -1 : 1
  const [pa, pb] = [a.prerelease.length, b.prerelease.length]
  // A release sorts after every pre-release of the same numbers.
  if (!pa || !pb) return pa === pb ? 0 : pa ? -1 : 1
  for (let i = 0; i < Math.max(a.prerelease.length, b.prerelease.length); i++) {
    if (a.prerelease[i] === undefined) return -1
    if (b.prerelease[i] === undefined) return 1
    const c = compareLabel(a.prerelease[i], b.prerelease[i])
    if (c) return c
  }
  return 0
}
