import { describe, expect, it } from 'vitest'
import { clientSnippets } from '../../server/dashboard/client-snippets'
import { documentedSnippet } from '../clients/run'

describe('dashboard client snippets', () => {
  it('fill in the firewall URL and leave the token as $FIREWALL_TOKEN, for every ecosystem', () => {
    for (const ecosystem of ['npm', 'pypi', 'maven', 'nuget'] as const) {
      const snippets = clientSnippets(ecosystem, 'https://fw.example.com/registry/team-a/build/')
      expect(snippets.length, ecosystem).toBeGreaterThan(0)
      for (const snippet of snippets) {
        expect(snippet.text, snippet.client).toContain('fw.example.com/registry/team-a/build/')
        expect(snippet.text, snippet.client).toContain('FIREWALL_TOKEN')
        expect(snippet.text, snippet.client).not.toContain('localhost')
      }
    }
  })

  it('are the documented snippets (README Maven settings, docs/clients.md npm, yarn, bun, poetry and Gradle)', () => {
    const url = 'http://localhost:3000/registry/default/jvm/'
    const [maven, gradle] = clientSnippets('maven', url)
    expect(`${maven.text}\n`).toBe(documentedSnippet('README.md', '**Maven**', 'xml'))
    expect(`${gradle.text}\n`.replace(/\n {2}\/\/.*\n/, '\n')).toBe(
      documentedSnippet('docs/clients.md', '### Gradle', 'groovy').replace(/\n {2}\/\/.*\n/, '\n'),
    )
    const [npmrc, yarnrc, bunfig] = clientSnippets('npm', 'http://localhost:3000/registry/default/web/')
    expect(`${npmrc.text}\n`).toBe(documentedSnippet('docs/clients.md', '### npm', 'ini'))
    expect(documentedSnippet('docs/clients.md', '### yarn', 'yaml')).toContain(yarnrc.text)
    expect(`${bunfig.text}\n`).toBe(documentedSnippet('docs/clients.md', '### bun', 'toml'))
    const [, poetry] = clientSnippets('pypi', 'http://localhost:3000/registry/default/py/')
    const marker = '`pyproject.toml` names the firewall'
    expect(`${poetry.text}\n`).toBe(
      `${documentedSnippet('docs/clients.md', marker, 'toml')}\n${documentedSnippet('docs/clients.md', marker, 'sh')}`,
    )
  })
})
