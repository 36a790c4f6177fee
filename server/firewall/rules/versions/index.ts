export { versionOrdering, sameVersion, type VersionOrdering } from './ordering'
export { inVersionRange, rangeProblem } from './range'
export { compareMaven } from './maven'
export { normalizeNuGet } from './nuget'
