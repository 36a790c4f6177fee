import type { Firewall } from '../../server/firewall/schema'

/** An empty npm firewall document as storage holds it (version 0: the repository assigns versions). */
export const emptyFirewall = (id: string): Firewall => ({
  id,
  version: 0,
  ecosystem: 'npm',
  name: id,
  description: '',
  upstreams: [],
  rules: [],
  exceptions: [],
  permissions: {},
  extends: [],
  updatedAt: '',
})
