// The dashboard sign-in's shapes (docs/dashboard-auth.md): who is signed in, and how this server signs people in.
import { type Static, Type } from 'typebox'

export const SessionAccount = Type.Object({
  id: Type.String({ description: 'Account id, acct_...' }),
  email: Type.Union([Type.String(), Type.Null()], { description: 'Verified email address; notifications go here' }),
  name: Type.Union([Type.String(), Type.Null()]),
})
export type SessionAccount = Static<typeof SessionAccount>

export const SessionView = Type.Object({ account: SessionAccount })
export type SessionView = Static<typeof SessionView>

export const SignInMethods = Type.Object({
  oidc: Type.Boolean({ description: 'Sign in at /auth/login with the OpenID Connect provider' }),
  localLink: Type.Boolean({ description: 'Sign in with the one-time link `countersign login-link` prints' }),
})
export type SignInMethods = Static<typeof SignInMethods>

export const LocalSignInQuery = Type.Object({ token: Type.String({ description: 'The one-time sign-in token' }) })
