// Authenticates API keys with a short-lived cache: a hot key costs one hash and one map lookup, and a
// revoked key stops working everywhere within CACHE_TTL_MS (at once in the process that revoked it). Only keys that
// exist are cached: random unknown keys would otherwise fill the cache (failed attempts are limited per client
// address instead, in api-key-auth.ts). A key that authenticated lately is looked up even while its address is
// limited: one client behind a shared address (NAT, a cluster's egress) failing with a stale key does not shut out
// the others, and a guesser gains nothing, as only keys that exist are remembered.

import type { Clock } from '../../platform/clock.js'
import type { Db } from '../../platform/db/database.js'
import { unauthorized } from '../../platform/errors.js'
import { digestsEqual, hashApiKey, isWellFormedApiKey } from './api-keys.js'
import { type ApiKeyPrincipal, apiKeysRepository } from './api-keys-repository.js'

export const API_KEY_CACHE_TTL_MS = 5_000
/** lastUsedAt is written at most this often per key, so that reads stay reads. */
const LAST_USED_WRITE_INTERVAL_MS = 60_000
const MAX_CACHED_KEYS = 50_000

/** A key of the wrong shape is most often one cut short when it was copied, or the variable meant to hold it unset. */
const MALFORMED_KEY = 'Invalid API key: a key is cs_ followed by 43 characters; check that the whole key was sent'
/** The key is shown once, when it is made, so the way out of a lost or wrong key is a new one. */
const UNKNOWN_KEY =
  "Invalid API key: no project of this service has it. Check that it is this service's key; a project's members make a new one in the dashboard"
/** How long a key that authenticated stays exempt from its address's limit on failed authentications. */
export const RECENTLY_VALID_MS = 10 * 60_000

interface CacheEntry {
  principal: ApiKeyPrincipal | undefined
  fetchedAtMs: number
}

export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, CacheEntry>()
  private readonly lastUsedWrittenAtMs = new Map<string, number>()
  /** Hashes of keys that authenticated, and when they last did. */
  private readonly validAtMs = new Map<string, number>()
  /** lastUsedAt writes under way: they do not hold up the request that caused them. */
  private readonly touches = new Set<Promise<void>>()

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly onBackgroundError: (error: unknown) => void,
  ) {}

  /**
   * The principal of a key, or a 401 for a missing, malformed, unknown or revoked key. `beforeLookup` runs before the
   * database is asked (not for a cached key, nor for one that authenticated in the last RECENTLY_VALID_MS), and may
   * refuse the request by throwing.
   */
  async authenticate(key: string | undefined, beforeLookup?: () => Promise<void>): Promise<ApiKeyPrincipal> {
    if (!key) throw unauthorized('Missing API key: send it as Authorization: Bearer <API key> or as the api_key query parameter')
    if (!isWellFormedApiKey(key)) throw unauthorized(MALFORMED_KEY)
    const hash = hashApiKey(key)
    const nowMs = this.clock.now()
    let entry = this.cache.get(hash)
    if (!entry || nowMs - entry.fetchedAtMs >= API_KEY_CACHE_TTL_MS) {
      const validAtMs = this.validAtMs.get(hash)
      if (validAtMs === undefined || nowMs - validAtMs >= RECENTLY_VALID_MS) await beforeLookup?.()
      entry = { principal: await apiKeysRepository.findPrincipalByHash(this.db, hash), fetchedAtMs: nowMs }
      if (entry.principal === undefined) this.cache.delete(hash)
      else {
        if (this.cache.size >= MAX_CACHED_KEYS) this.cache.clear()
        this.cache.set(hash, entry)
      }
    }
    const principal = entry.principal
    // The lookup was by hash; compare again in constant time so no code path branches on a partial match.
    if (!principal || !digestsEqual(principal.keyHash, hash)) throw unauthorized(UNKNOWN_KEY)
    if (principal.revoked) {
      this.validAtMs.delete(hash)
      throw unauthorized('API key has been revoked')
    }
    if (this.validAtMs.size >= MAX_CACHED_KEYS) this.validAtMs.clear()
    this.validAtMs.set(hash, nowMs)
    this.touch(principal.keyId, nowMs)
    return principal
  }

  /**
   * Forgets one key (by its hash) so that its revocation is seen by the next request in this process. Only that key:
   * clearing the whole cache let any account, revoking a key again and again, send every project's requests to the
   * database.
   */
  forget(keyHash: string): void {
    this.cache.delete(keyHash)
  }

  private touch(keyId: string, nowMs: number): void {
    const last = this.lastUsedWrittenAtMs.get(keyId)
    if (last !== undefined && nowMs - last < LAST_USED_WRITE_INTERVAL_MS) return
    if (this.lastUsedWrittenAtMs.size >= MAX_CACHED_KEYS) this.lastUsedWrittenAtMs.clear()
    this.lastUsedWrittenAtMs.set(keyId, nowMs)
    const touch = apiKeysRepository.touchLastUsed(this.db, keyId, nowMs).catch(this.onBackgroundError)
    this.touches.add(touch)
    void touch.finally(() => this.touches.delete(touch))
  }

  /** Resolves once the lastUsedAt writes started so far have finished (for shutdown, and for readers that need them). */
  async settled(): Promise<void> {
    await Promise.all(this.touches)
  }
}
