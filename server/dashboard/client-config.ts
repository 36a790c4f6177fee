import { getRequestURL } from 'h3'
import type { Ecosystem } from '../firewall/schema'
import { clientSnippets, TOKEN_PLACEHOLDER } from './client-snippets'
import type { DashboardRequest } from './handler'
import { html, type Html } from './html'

/** A firewall's client URL as the registry serves it (`PUBLIC_BASE_URL`, else this request's origin). */
export function clientUrlOf(req: DashboardRequest, firewallId: string): string {
  const origin = req.services.config.publicBaseUrl ?? getRequestURL(req.event).origin
  return `${origin}/registry/${encodeURIComponent(req.viewer.ns)}/${encodeURIComponent(firewallId)}/`
}

/**
 * The client configuration of docs/clients.md for one firewall, its URL filled in and the token
 * left as `$FIREWALL_TOKEN`: what the firewall page and the developer's home show.
 */
export function clientConfig(req: DashboardRequest, fw: { id: string; ecosystem: Ecosystem }): Html {
  const clientUrl = clientUrlOf(req, fw.id)
  return html`<p class="small muted">
      Client URL <code class="break" data-testid="client-url">${clientUrl}</code>.
      <code>$${TOKEN_PLACEHOLDER}</code> stands for your access token (a personal token from the Tokens page); keep it
      in the environment, not in the file. Every client, publishing and what a block looks like: docs/clients.md.
    </p>
    ${clientSnippets(fw.ecosystem, clientUrl).map(
      (snippet) =>
        html`<h3 class="small">${snippet.client} <span class="muted">· ${snippet.where}</span></h3>
          <pre class="code" data-testid="client-snippet">${snippet.text}</pre>`,
    )}`
}
