// Type declarations for the SPDX helpers, which ship without types.
declare module 'spdx-satisfies' {
  /** Whether the SPDX expression is satisfied by the approved simple license ids; throws on bad input. */
  function satisfies(expression: string, approved: string[]): boolean
  export default satisfies
}

declare module 'spdx-expression-parse' {
  type Parsed =
    | { license: string; plus?: true; exception?: string }
    | { noassertion: true }
    | { conjunction: 'and' | 'or'; left: Parsed; right: Parsed }
  /** Parses an SPDX expression; throws on invalid input. */
  function parse(expression: string): Parsed
  export default parse
}
