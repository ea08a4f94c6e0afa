// What the session-authenticated project endpoints share: their OpenAPI tag and note, and the signed-in account they
// act for (app.ts registers them behind the session hook).
import type { FastifyRequest } from 'fastify'
import { sessionOf } from '../../platform/http/session-auth.js'

export const PROJECT_TAGS = ['projects']
export const SESSION_NOTE =
  'Session-authenticated (the dashboard cookie); API keys are not accepted. Changes need an Origin equal to PUBLIC_URL.'

/** The signed-in account's id. */
export function accountOf(request: FastifyRequest): string {
  return sessionOf(request).account.id
}
