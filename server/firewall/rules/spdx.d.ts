// Type declarations for the SPDX helpers, which ship without types.
declare module 'spdx-satisfies' {
  /** Whether the SPDX expression is satisfied by the approved simple license ids; throws on bad input. */
  function satisfies(expression: string, approved: string[]): boolean
  export default satisfies
}

declare module 'spdx-expression-parse' {
  export type SpdxNode =
    | { license: string; plus?: true; exception?: string }
    | { noassertion: true }
    | { conjunction: 'and' | 'or'; left: SpdxNode; right: SpdxNode }
  /** Parses an SPDX expression; throws on invalid input. */
  function parse(expression: string): SpdxNode
  export default parse
}

declare module 'spdx-ranges' {
  /** Families of license ids in version order; an inner array holds ids of equal rank. */
  const ranges: readonly (readonly (string | readonly string[])[])[]
  export default ranges
}
