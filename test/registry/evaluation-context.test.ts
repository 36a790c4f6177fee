import { describe, expect, it } from 'vitest'
import { LocalBackend } from '../../storage/local-backend'
import { createServices } from '../../server/app/services'
import { configFromEnv } from '../../server/app/config'
import { EMPTY_ADVISORY_INDEX as noAdvisories } from '../../server/advisories/index-build'
import { evaluationContext } from '../../server/registry/firewall-chain'
import { readsLicenseSets } from '../../server/firewall/rules/reads-license-sets'
import { FirewallInput, type Firewall, type Selector } from '../../server/firewall/schema'

const license: Selector = { function: { name: 'license', licenseSet: 'oss', mode: 'allow' } }
const names: Selector = { function: { name: 'packageName', patterns: ['evil-*'] } }

function firewall(selector: Selector): Firewall {
  const input = FirewallInput.parse({ id: 'fw', rules: [{ id: 'r', executionPhase: 'download', selector }] })
  return { ...input, id: 'fw', name: 'fw', version: 1, updatedAt: '' }
}

describe('evaluation context: license sets read only for chains with a license rule', () => {
  it('finds a license selector nested in all/any/not, and none where there is none', () => {
    expect(readsLicenseSets(license)).toBe(true)
    const nested: Selector = {
      function: { name: 'all', selectors: [names, { function: { name: 'not', selector: license } }] },
    }
    expect(readsLicenseSets(nested)).toBe(true)
    expect(readsLicenseSets({ function: { name: 'any', selectors: [names] } })).toBe(false)
    expect(readsLicenseSets(names)).toBe(false)
  })

  it('reads the sets for a license rule on every call (a change counts at once), and not otherwise', async () => {
    const services = createServices(new LocalBackend(), { config: configFromEnv({}) })
    const setLicenses = (licenses: string[]) =>
      services.licenseSets('acme').update((items) => ({
        items: items.set('oss', { id: 'oss', name: 'OSS', licenses, createdAt: '', updatedAt: '' }),
        result: undefined,
      }))
    await setLicenses(['MIT'])
    const withLicense = [{ firewall: firewall(license) }]
    expect((await evaluationContext(services, 'acme', noAdvisories, withLicense)).licenseSets.get('oss')).toEqual([
      'MIT',
    ])
    await setLicenses(['MIT', 'ISC'])
    expect((await evaluationContext(services, 'acme', noAdvisories, withLicense)).licenseSets.get('oss')).toEqual([
      'MIT',
      'ISC',
    ])
    const without = await evaluationContext(services, 'acme', noAdvisories, [{ firewall: firewall(names) }])
    expect(without.licenseSets.size).toBe(0)
  })
})
