/**
 * PEP 440 versions (https://packaging.python.org/en/latest/specifications/version-specifiers/):
 * parsing with the specification's normalisations (case, separators, `alpha`->`a`, `c`->`rc`,
 * `rev`->`post`, implicit numbers) and the total ordering of its "Summary of permitted suffixes".
 */
interface Pep440Version {
  epoch: number
  release: number[]
  pre?: [letter: 'a' | 'b' | 'rc', number: number]
  post?: number
  dev?: number
  local?: (number | string)[]
}

// The specification's own regular expression (Appendix B), anchored and case-insensitive.
const PATTERN =
  /^\s*v?(?:(\d+)!)?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?(\d+)?)?(?:-(\d+)|[-_.]?(post|rev|r)[-_.]?(\d+)?)?(?:[-_.]?(dev)[-_.]?(\d+)?)?(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$/i

const PRE: Record<string, 'a' | 'b' | 'rc'> = {
  a: 'a',
  alpha: 'a',
  b: 'b',
  beta: 'b',
  c: 'rc',
  rc: 'rc',
  pre: 'rc',
  preview: 'rc',
}

/**
 * Parses a PEP 440 version; null when the text is not one.
 * @example parsePep440('1.0RC1').pre // ['rc', 1]
 */
export function parsePep440(text: string): Pep440Version | null {
  const m = PATTERN.exec(text)
  if (!m) return null
  const [, epoch, release, preL, preN, postImplicit, postL, postN, devL, devN, local] = m
  return {
    epoch: epoch ? Number(epoch) : 0,
    release: release.split('.').map(Number),
    ...(preL ? { pre: [PRE[preL.toLowerCase()], Number(preN ?? 0)] as Pep440Version['pre'] } : {}),
    ...(postImplicit !== undefined ? { post: Number(postImplicit) } : postL ? { post: Number(postN ?? 0) } : {}),
    ...(devL ? { dev: Number(devN ?? 0) } : {}),
    ...(local
      ? {
          local: local
            .toLowerCase()
            .split(/[-_.]/)
            .map((part) => (/^\d+$/.test(part) ? Number(part) : part)),
        }
      : {}),
  }
}

const cmp = (a: number, b: number) => (a < b ? -1 : a > b ? 1 : 0)

function compareRelease(a: number[], b: number[]): number {
  // Trailing zeros are insignificant: 1.0 == 1.0.0.
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const c = cmp(a[i] ?? 0, b[i] ?? 0)
    if (c) return c
  }
  return 0
}

// Sort keys as in `packaging.version._cmpkey`: a dev release without pre/post sorts before
// every pre-release of the same release; no pre-release sorts after all of them; no post
// sorts before any post; no dev sorts after any dev.
function preKey(v: Pep440Version): [number, number] {
  if (!v.pre && v.post === undefined && v.dev !== undefined) return [-1, 0]
  if (!v.pre) return [3, 0]
  return [['a', 'b', 'rc'].indexOf(v.pre[0]), v.pre[1]]
}

function compareLocal(a: Pep440Version['local'], b: Pep440Version['local']): number {
  if (!a || !b) return a ? 1 : b ? -1 : 0
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i]
    const y = b[i]
    if (x === undefined || y === undefined) return x === undefined ? -1 : 1
    if (x === y) continue
    // Numeric segments sort after alphanumeric ones.
    if (typeof x !== typeof y) return typeof x === 'number' ? 1 : -1
    return x < y ? -1 : 1
  }
  return 0
}

/**
 * PEP 440 ordering of two parsed versions.
 * @example comparePep440(parsePep440('1.0.dev1')!, parsePep440('1.0a1')!) // -1
 */
export function comparePep440(a: Pep440Version, b: Pep440Version): number {
  const [pa, pb] = [preKey(a), preKey(b)]
  return (
    cmp(a.epoch, b.epoch) ||
    compareRelease(a.release, b.release) ||
    cmp(pa[0], pb[0]) ||
    cmp(pa[1], pb[1]) ||
    cmp(a.post ?? -1, b.post ?? -1) ||
    cmp(a.dev ?? Infinity, b.dev ?? Infinity) ||
    compareLocal(a.local, b.local)
  )
}

/** Whether a PEP 440 version is a pre-release (PEP 440 counts dev releases as pre-releases). */
export function isPep440Prerelease(v: Pep440Version): boolean {
  return Boolean(v.pre) || v.dev !== undefined
}
