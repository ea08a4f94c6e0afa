// A real OpenID Connect provider (oidc-provider) on loopback for sign-in tests, with its development
// login and consent pages, which TestBrowser fills in like a person would.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import Provider from 'oidc-provider'

export interface TestUser {
  email?: string
  /** A boolean, as the standard says; a string as some providers send it. */
  email_verified?: boolean | 'true' | 'false'
  name?: string
}

export interface TestIdentityProvider {
  issuer: string
  clientId: string
  clientSecret: string
  stop(): Promise<void>
}

export async function startIdentityProvider(redirectUri: string, users: Record<string, TestUser>): Promise<TestIdentityProvider> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const clientId = 'countersign-dashboard'
  const clientSecret = 'a-client-secret-for-the-test-provider'
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    async findAccount(_ctx, sub) {
      const user = users[sub]
      return user && { accountId: sub, claims: async () => ({ sub, ...user }) }
    },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ['a-cookie-signing-key-for-the-test-provider'] },
  })
  // Keep the provider's server errors (expected ones, such as a replayed code) out of the test output.
  provider.on('server_error', () => {})
  server.on('request', provider.callback())
  return {
    issuer,
    clientId,
    clientSecret,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}
