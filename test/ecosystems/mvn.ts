import { execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { QUICK_JVM_OPTS } from '../support/jvm'

/**
 * `mvn deploy:deploy-file` to a firewall (server id `fw`, the token as password). Runs online
 * but needs nothing from the network: the deploy plugin comes from the local repository.
 */
export function mvnDeploy(
  url: string,
  token: string,
  coordinates: { groupId: string; artifactId: string; version: string },
): Promise<{ code: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'pf-mvn-'))
  writeFileSync(
    join(dir, 'settings.xml'),
    `<settings><servers><server><id>fw</id><username>ci</username><password>${token}</password></server></servers></settings>`,
  )
  writeFileSync(join(dir, 'lib.jar'), 'not really a jar')
  const args = [
    '-B',
    '-s',
    join(dir, 'settings.xml'),
    'org.apache.maven.plugins:maven-deploy-plugin:3.1.1:deploy-file',
    '-Dfile=lib.jar',
    `-DgroupId=${coordinates.groupId}`,
    `-DartifactId=${coordinates.artifactId}`,
    `-Dversion=${coordinates.version}`,
    '-Dpackaging=jar',
    `-Durl=${url}`,
    '-DrepositoryId=fw',
  ]
  return new Promise((resolve) => {
    const env = { ...process.env, MAVEN_OPTS: QUICK_JVM_OPTS }
    execFile('mvn', args, { cwd: dir, env, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? 1 : 0, output: `${stdout}\n${stderr}` }),
    )
  })
}

/** Whether `mvn` and its deploy plugin are available here. */
export function hasMaven(): Promise<boolean> {
  return new Promise((resolve) => execFile('mvn', ['-v'], (error) => resolve(!error)))
}
