import type { PackageVersionFacts } from '../firewall/rules/types'

/** One version as an upstream describes it, for the reviewer's facts panel. */
export interface VersionEntry extends PackageVersionFacts {
  /** Outside npm: what installing it runs, in plain words (npm has `scripts` instead). */
  installNote?: string
}

/** Facts an ecosystem's upstream does not give, each with the sentence shown instead of "none". */
export interface FactNotes {
  published?: string
  license?: string
  installScripts?: string
}

/** Every version of one package on the upstream that has it. */
export interface VersionList {
  versions: VersionEntry[]
  latest?: string
  notes?: FactNotes
}
