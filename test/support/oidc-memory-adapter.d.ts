// The in-memory adapter oidc-provider ships (no types of its own; @types/oidc-provider covers the package root).
declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  import type { Adapter } from 'oidc-provider'
  export function createMemoryAdapter(clockTolerance?: number): (model: string) => Adapter
}
