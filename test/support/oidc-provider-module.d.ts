// The part of oidc-provider's API the tests use; the package ships no types and @types/oidc-provider is not installed.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http'

  interface ClientMetadata {
    client_id: string
    client_secret: string
    redirect_uris: string[]
    grant_types?: string[]
    response_types?: string[]
    token_endpoint_auth_method?: string
  }

  interface Account {
    accountId: string
    claims(): Promise<Record<string, unknown>>
  }

  interface Configuration {
    clients?: ClientMetadata[]
    claims?: Record<string, string[]>
    findAccount?: (ctx: unknown, sub: string) => Promise<Account | undefined>
    features?: Record<string, { enabled: boolean }>
    cookies?: { keys?: string[] }
    pkce?: { required?: () => boolean }
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration)
    proxy: boolean
    callback(): (req: IncomingMessage, res: ServerResponse) => void
    on(event: string, listener: (...args: unknown[]) => void): this
  }
}
