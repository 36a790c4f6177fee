/**
 * Requests of NuGet's v2 (OData) protocol: the feed root, `$metadata`, `Packages()`,
 * `FindPackagesById()`, `Search()` and the other functions, `Packages(Id='x',Version='y')`.
 * The proxy serves NuGet v3 only (service index `v3/index.json`); v2-only clients (nuget.exe
 * 2.x, old Visual Studio, `mono nuget.exe` against a v2 URL) get an answer that says so
 * instead of a bare 404.
 */
const V2_PATH =
  /^\/(?:api\/v2\/?)?(?:\$metadata|Packages(?:\(.*\))?|FindPackagesById\(\)|Search\(\)|GetUpdates\(\)|package-ids|package-versions\/.*)?\/?$/i

export function isNugetV2Request(path: string): boolean {
  return V2_PATH.test(path)
}

/**
 * The refusal text for a v2 request, naming the v3 URL to use.
 * @example v2Refusal('http://localhost:3000/registry/default/dotnet/')
 */
export function v2Refusal(baseUrl: string): string {
  return (
    `this NuGet feed speaks the v3 protocol only: use the service index ${baseUrl}v3/index.json ` +
    'with a NuGet 3.0 or later client (dotnet CLI, nuget.exe 3.0+, Visual Studio 2015+); ' +
    'v2 (OData) requests such as FindPackagesById() are not served'
  )
}
