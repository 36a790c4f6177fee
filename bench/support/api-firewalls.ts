import { apiClient } from '../../test/support/server'

/**
 * bench:api's namespace: 50 npm firewalls `fw-0`..`fw-49` in `default`, each with one upstream
 * and five download rules, created through the API (bench:api and bench:api-ab measure the same).
 */
export async function createBenchFirewalls(url: string, token: string): Promise<void> {
  const api = apiClient(url, token)
  for (let i = 0; i < 50; i++) {
    const res = await api('PUT', `/v1/default/config/fw-${i}`, {
      upstreams: [{ id: 'npmjs', endpoint: 'https://registry.npmjs.org', credentials: { token: 'bench-secret' } }],
      rules: Array.from({ length: 5 }, (_, r) => ({
        id: `r${r}`,
        executionPhase: 'download',
        selector: { function: { name: 'packageName', patterns: [`bad-${r}-*`] } },
        description: 'bench rule',
      })),
    })
    if (res.status !== 201) throw new Error(`setup failed: ${res.status}`)
  }
}
