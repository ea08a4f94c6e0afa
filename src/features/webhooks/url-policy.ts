// Registration-time check of a webhook URL: shape, and where its host resolves (SSRF).
// The same address rule is applied again when each delivery connects (send.ts), because DNS can change in between.
import { lookup as dnsLookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { unprocessable } from '../../platform/errors.js'
import { A_PUBLIC_ADDRESS, describeForbiddenAddress } from './target-address.js'

export const MAX_WEBHOOK_URL_LENGTH = 2048

/** Said with every refusal of a private address: a developer's local receiver is the usual reason to meet one. */
export const PRIVATE_TARGETS_HINT =
  ' (for a receiver on this machine or a private network, as in local development, start the service with WEBHOOK_ALLOW_PRIVATE_TARGETS=true)'

export interface AssertWebhookUrlOptions {
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: allow any address the host resolves to (tests, local development). */
  allowPrivateTargets: boolean
  /** Every address (A and AAAA) the host resolves to; the system resolver when omitted. */
  lookup?: (host: string) => Promise<string[]>
}

/** The parsed URL when it is an acceptable webhook target; otherwise throws a 422 on field `url`. */
export async function assertWebhookUrl(url: string, options: AssertWebhookUrlOptions): Promise<URL> {
  if (url.length > MAX_WEBHOOK_URL_LENGTH) refuse(`url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`)
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return refuse('url must be an absolute http or https URL')
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') refuse(`url must use http or https, not ${parsed.protocol.slice(0, -1)}`)
  if (parsed.username !== '' || parsed.password !== '')
    refuse('url must not contain a user name or password; authenticate deliveries with the signature')
  // Port 0 is no port a receiver listens on: every delivery would fail to connect, for as long as the webhook lives.
  if (parsed.port === '0') refuse('url must not use port 0, on which no receiver can listen')

  const host = webhookHost(parsed)
  if (isIP(host) !== 0) {
    const forbidden = options.allowPrivateTargets ? undefined : describeForbiddenAddress(host)
    if (forbidden !== undefined) refuse(`url is ${forbidden} (${host}); webhook targets must be public${PRIVATE_TARGETS_HINT}`)
    return parsed
  }
  const addresses = await (options.lookup ?? lookupAll)(host).catch((): string[] => [])
  // What a name resolves to here is this service's DNS's to know, not the caller's. A name that does not resolve and a
  // name that resolves to a private address get the same answer: naming the address or its kind, or telling the two
  // apart, would let anyone with an API key map the names of the service's private network one registration at a time.
  if (
    addresses.length === 0 ||
    (!options.allowPrivateTargets && addresses.some((address) => describeForbiddenAddress(address) !== undefined))
  ) {
    // A host that does not resolve is refused even where private targets are allowed: it could never be delivered to.
    refuse(
      options.allowPrivateTargets
        ? `url host ${host} does not resolve to any address; webhook targets must have a DNS name or address that resolves`
        : `url host ${host} does not resolve to ${A_PUBLIC_ADDRESS}; webhook targets must have a public DNS name or address${PRIVATE_TARGETS_HINT}`,
    )
  }
  return parsed
}

/** The URL's host as a resolver or net.connect takes it: an IPv6 literal without its brackets. */
export function webhookHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1')
}

async function lookupAll(host: string): Promise<string[]> {
  const results = await dnsLookup(host, { all: true })
  return results.map((result) => result.address)
}

function refuse(message: string): never {
  throw unprocessable([{ field: 'url', message }])
}
