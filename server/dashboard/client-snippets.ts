import type { Ecosystem } from '../firewall/schema'

/** One client's configuration for a firewall, as docs/clients.md shows it. */
export interface ClientSnippet {
  client: string
  /** Where it goes (a file, or "shell"). */
  where: string
  text: string
}

/**
 * A firewall's client URL, `{base_url}/registry/{ns}/{fw}/` (CONTRACT section 5).
 * @example firewallClientUrl('https://fw.example.com', 'default', 'web') // 'https://fw.example.com/registry/default/web/'
 */
export function firewallClientUrl(origin: string, ns: string, fw: string): string {
  return `${origin}/registry/${encodeURIComponent(ns)}/${encodeURIComponent(fw)}/`
}

/** The token placeholder: an environment variable, so no secret lands in a project file. */
export const TOKEN_PLACEHOLDER = 'FIREWALL_TOKEN'

/**
 * The configuration snippets of docs/clients.md for a firewall's ecosystem, with its client URL
 * filled in and the token left as `$FIREWALL_TOKEN`. Pure: the page passes the URL.
 * @example clientSnippets('npm', 'https://fw.example.com/registry/default/web/')
 */
export function clientSnippets(ecosystem: Ecosystem, clientUrl: string): ClientSnippet[] {
  const url = new URL(clientUrl)
  const nerf = `//${url.host}${url.pathname}`
  const token = TOKEN_PLACEHOLDER
  switch (ecosystem) {
    case 'npm':
      return [
        {
          client: 'npm, bun (.npmrc); pnpm (user-level ~/.npmrc)',
          where: '.npmrc',
          text: `registry=${clientUrl}\n${nerf}:_authToken=\${${token}}`,
        },
        {
          client: 'yarn 4',
          where: '.yarnrc.yml',
          text: `npmRegistryServer: '${clientUrl}'\nnpmAuthToken: '\${${token}}'\nnpmAlwaysAuth: true`,
        },
        {
          client: 'bun',
          where: 'bunfig.toml',
          text: `[install]\nregistry = { url = "${clientUrl}", token = "$${token}" }`,
        },
      ]
    case 'pypi':
      return [
        {
          client: 'pip',
          where: 'shell',
          text: `pip install --index-url "${url.protocol}//__token__:$${token}@${url.host}${url.pathname}simple/" <package>`,
        },
        {
          client: 'poetry',
          where: 'pyproject.toml + shell',
          text:
            `[[tool.poetry.source]]\nname = "firewall"\nurl = "${clientUrl}simple/"\npriority = "primary"\n\n` +
            `poetry config http-basic.firewall __token__ "$${token}"\n` +
            `poetry config repositories.firewall-upload ${clientUrl}legacy/\n` +
            `poetry config http-basic.firewall-upload __token__ "$${token}"\n` +
            `poetry publish --build -r firewall-upload`,
        },
        {
          client: 'twine',
          where: 'shell',
          text: `twine upload --repository-url ${clientUrl}legacy/ -u __token__ -p "$${token}" dist/*`,
        },
      ]
    case 'maven':
      return [
        {
          client: 'Maven',
          where: '.mvn/settings.xml (mvn -s .mvn/settings.xml)',
          text:
            `<settings>\n  <mirrors><mirror><id>firewall</id><mirrorOf>*</mirrorOf>\n    <url>${clientUrl}</url></mirror></mirrors>\n` +
            `  <servers><server><id>firewall</id><username>ci</username><password>\${env.${token}}</password></server></servers>\n</settings>`,
        },
        {
          client: 'Gradle',
          where: 'build.gradle repositories { }',
          text: `maven {\n  name = 'firewall'\n  url = '${clientUrl}'\n  credentials {\n    username = 'ci'\n    password = System.getenv('${token}')\n  }\n}`,
        },
      ]
    case 'nuget':
      return [
        {
          client: 'dotnet / NuGet 3+',
          where: 'nuget.config',
          text:
            `<configuration>\n  <packageSources><clear /><add key="firewall" value="${clientUrl}v3/index.json" /></packageSources>\n` +
            `  <packageSourceCredentials><firewall>\n    <add key="Username" value="ci" /><add key="ClearTextPassword" value="%${token}%" />\n  </firewall></packageSourceCredentials>\n</configuration>`,
        },
      ]
  }
}
