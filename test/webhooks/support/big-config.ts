/** A firewall configuration of at least `kb` KB of JSON: rules with long pattern lists, as a real PUT can carry. */
export function bigFirewallConfig(kb: number): Record<string, unknown> {
  const rules: unknown[] = []
  const config = { id: 'main', name: 'Main firewall', ecosystem: 'npm', upstreams: [{ id: 'npmjs' }], rules }
  for (let bytes = 0; bytes < kb * 1024;) {
    const rule = {
      id: `rule-${rules.length}`,
      function: { name: 'glob', mode: 'deny' },
      patterns: Array.from({ length: 100 }, (_, p) => `@scope-${rules.length}/package-name-${p}*`),
    }
    rules.push(rule)
    bytes += Buffer.byteLength(JSON.stringify(rule)) + 1
  }
  return config
}
