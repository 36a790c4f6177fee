import { normalizeCidr, type UpstreamAddressSettings } from './address-policy'
import { parseSize } from '../common/size'

/** An invalid upstream or network setting; the message names the variable and the value (a start-up error). */
export class NetworkSettingError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`)
    this.name = 'NetworkSettingError'
  }
}

type Env = Record<string, string | undefined>

/**
 * `UPSTREAM_ALLOWED_NETWORKS` and `UPSTREAM_DENIED_NETWORKS`: comma-separated CIDRs (a bare
 * address is one host). Pure: pass the environment in.
 * @example parseUpstreamAddressSettings({ UPSTREAM_ALLOWED_NETWORKS: '127.0.0.0/8' }).allowedNetworks // ['127.0.0.0/8']
 */
export function parseUpstreamAddressSettings(env: Env): UpstreamAddressSettings {
  return {
    allowedNetworks: networks('UPSTREAM_ALLOWED_NETWORKS', env.UPSTREAM_ALLOWED_NETWORKS),
    deniedNetworks: networks('UPSTREAM_DENIED_NETWORKS', env.UPSTREAM_DENIED_NETWORKS),
  }
}

function networks(variable: string, text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const cidr = normalizeCidr(part)
      if (!cidr)
        throw new NetworkSettingError(variable, `invalid CIDR "${part}" (expected e.g. 10.0.0.0/8 or fd00::/8)`)
      return cidr
    })
}

/** `UPSTREAM_MAX_BODY` (metadata answers) and `UPSTREAM_MAX_ARTIFACT` (artifacts), in bytes. */
export interface UpstreamSizeSettings {
  metadata: number
  artifact: number
}

/**
 * `UPSTREAM_MAX_BODY` (default `64MB`) and `UPSTREAM_MAX_ARTIFACT` (default `512MB`): sizes such
 * as `512KB`, `64MB`, `1GB` or bytes. Pure: pass the environment in.
 * @example parseUpstreamSizeSettings({ UPSTREAM_MAX_BODY: '1MB' }).metadata // 1048576
 */
export function parseUpstreamSizeSettings(env: Env): UpstreamSizeSettings {
  return {
    metadata: size('UPSTREAM_MAX_BODY', env.UPSTREAM_MAX_BODY, '64MB'),
    artifact: size('UPSTREAM_MAX_ARTIFACT', env.UPSTREAM_MAX_ARTIFACT, '512MB'),
  }
}

function size(variable: string, text: string | undefined, fallback: string): number {
  try {
    return parseSize(text?.trim() || fallback)
  } catch (error) {
    throw new NetworkSettingError(variable, (error as Error).message)
  }
}
