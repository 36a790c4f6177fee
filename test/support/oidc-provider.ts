import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Provider, { type Adapter, type AdapterPayload } from 'oidc-provider'
import { createMemoryAdapter } from 'oidc-provider/lib/adapters/memory_adapter.js'

/**
 * A real OpenID Connect provider (oidc-provider) on 127.0.0.1 for sign-in tests. Its login
 * step is automatic: the interaction signs in `nextUser` (claims from `accounts`) and grants
 * the requested scopes, so a browser or a plain HTTP client goes straight through.
 * `expireCodes` makes every authorization code read as expired at the token endpoint (the
 * provider's own expiry check refuses it, without the test waiting for the clock).
 */
export interface TestAccount {
  groups: string[]
  email?: string
}

export interface TestProvider {
  issuer: string
  clientId: string
  clientSecret: string
  accounts: Map<string, TestAccount>
  nextUser: string
  expireCodes: boolean
  close(): Promise<void>
}

export const TEST_CLIENT_ID = 'package-firewall'
export const TEST_CLIENT_SECRET = 'test-client-secret-0123456789abcdef'

/** `redirectUris`: the dashboard's `/auth/callback` URLs this client may use. */
export async function startTestProvider(
  redirectUris: string[],
  options: { port?: number } = {},
): Promise<TestProvider> {
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const memory = createMemoryAdapter()
  const state: TestProvider = {
    issuer,
    clientId: TEST_CLIENT_ID,
    clientSecret: TEST_CLIENT_SECRET,
    accounts: new Map(),
    nextUser: 'alice',
    expireCodes: false,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  const adapter = (model: string): Adapter => {
    const inner = memory(model)
    if (model !== 'AuthorizationCode') return inner
    return Object.assign(Object.create(inner) as Adapter, {
      async find(id: string): Promise<AdapterPayload | undefined> {
        const payload = (await inner.find(id)) ?? undefined
        return payload && state.expireCodes ? { ...payload, exp: Math.floor(Date.now() / 1000) - 60 } : payload
      },
    })
  }
  const provider = new Provider(issuer, {
    adapter,
    clients: [
      {
        client_id: TEST_CLIENT_ID,
        client_secret: TEST_CLIENT_SECRET,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    claims: { openid: ['sub'], profile: ['preferred_username', 'name'], email: ['email'], groups: ['groups'] },
    scopes: ['openid', 'profile', 'email', 'groups'],
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['test-provider-cookie-key-0123456789'] },
    async findAccount(_ctx, id) {
      return {
        accountId: id,
        async claims() {
          const account = state.accounts.get(id)
          return { sub: id, preferred_username: id, name: id, groups: account?.groups ?? [], email: account?.email }
        },
      }
    },
  })
  const callback = provider.callback()
  server.on('request', (req, res) => {
    if (!req.url?.startsWith('/interaction/')) return void callback(req, res)
    void (async () => {
      const details = await provider.interactionDetails(req, res)
      if (details.prompt.name === 'login') {
        await provider.interactionFinished(
          req,
          res,
          { login: { accountId: state.nextUser } },
          {
            mergeWithLastSubmission: false,
          },
        )
        return
      }
      const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: TEST_CLIENT_ID })
      grant.addOIDCScope(String(details.params.scope))
      await provider.interactionFinished(
        req,
        res,
        { consent: { grantId: await grant.save() } },
        {
          mergeWithLastSubmission: true,
        },
      )
    })().catch((error: unknown) => {
      res.writeHead(500).end(String(error))
    })
  })
  return state
}
