/** Every storage key the repositories use, in one place. Ids never contain ':'. */
export const keys = {
  namespace: (ns: string) => `ns:${ns}:meta`,
  users: (ns: string) => `ns:${ns}:users`,
  teams: (ns: string) => `ns:${ns}:teams`,
  licenseSets: (ns: string) => `ns:${ns}:license-sets`,
  tokenIndex: (ns: string) => `ns:${ns}:tokens`,
  token: (hash: string) => `token:${hash}`,
  firewallIndex: (ns: string) => `ns:${ns}:fw-index`,
  /** Changes with every firewall write of the namespace: lets readers keep a cache. */
  firewallStamp: (ns: string) => `ns:${ns}:fw-stamp`,
  firewall: (ns: string, id: string) => `ns:${ns}:fw:${id}`,
  firewallVersion: (ns: string, id: string, version: number) => `ns:${ns}:fw-history:${id}:${version}`,
  /** A dashboard session's server-side record (its id travels inside the sealed cookie). */
  dashboardSession: (id: string) => `dashboard-session:${id}`,
  dashboardSessionPrefix: 'dashboard-session:',
  /** Log names (entries carry their own time). */
  auditLog: (ns: string) => `audit:${ns}`,
  firewallLog: (ns: string, id: string) => `fwlog:${ns}:${id}`,
}
