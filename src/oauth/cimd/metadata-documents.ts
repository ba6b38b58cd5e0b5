import type { Clock } from '../../core/clock.ts'
import type { WindowLimitOption } from '../../core/http/rate-limiters.ts'
import type { KeyValueStore } from '../../core/kv/key-value-store.ts'
import type { Logger } from '../../core/logger.ts'
import { OAuthError } from '../errors.ts'
import { parseClientMetadata, type RegisteredClient } from '../protocol/client-metadata.ts'
import { sha256Hex } from '../protocol/random.ts'
import { getJson, setJson } from '../store/json.ts'
import { cacheSeconds, parseClientIdUrl } from './client-id-url.ts'
import {
  DocumentFetchError,
  type DocumentFetchLimits,
  fetchClientDocument,
} from './fetch-document.ts'

export interface ClientMetadataDocumentOptions {
  /** Accept `client_id` URLs at all. Default true. */
  enabled?: boolean
  /**
   * Development and tests only: allow `http://127.0.0.1`/`localhost` document URLs and
   * loopback addresses. Never set it in production.
   */
  allowLoopback?: boolean
  /** Largest document, in bytes. Default 5 KiB (the draft's suggestion). */
  maxBytes?: number
  /** Time for one fetch, redirects included. Default 5 s. */
  timeoutMs?: number
  /** Longest a document is cached, whatever its `max-age`. Default 24 h. */
  maxCacheSeconds?: number
  /** Caching of a document without `Cache-Control`. Default 5 minutes. */
  defaultCacheSeconds?: number
  /**
   * Document fetches one client address may cause (limiter `oauth-cimd-fetch`); cached
   * documents and cached failures do not count. Default 30 per 15 minutes.
   */
  fetchLimit?: WindowLimitOption
  /** How long a failed fetch or a refused document is remembered. Default 60 s; 0 never. */
  failureCacheSeconds?: number
}

/** The default of `fetchLimit`. */
export const DOCUMENT_FETCH_LIMIT: WindowLimitOption = { points: 30, durationSeconds: 15 * 60 }

/** The fields of RFC 7591 client metadata a document may carry; others are dropped. */
const KNOWN_FIELDS = new Set([
  'client_id',
  'client_name',
  'client_uri',
  'logo_uri',
  'tos_uri',
  'policy_uri',
  'contacts',
  'redirect_uris',
  'grant_types',
  'response_types',
  'token_endpoint_auth_method',
  'scope',
  'software_id',
  'software_version',
  'application_type',
])
const FORBIDDEN_FIELDS = ['client_secret', 'client_secret_expires_at']

const cacheKey = (url: string) => `oauth:cimd:${sha256Hex(url)}`
const failureKey = (url: string) => `oauth:cimd-refused:${sha256Hex(url)}`

/**
 * Clients identified by the URL of their metadata document (CIMD): fetched on first use,
 * validated, and cached in the shared store for as long as the document's `Cache-Control`
 * allows (bounded). A failure is cached there too, briefly, so a URL that does not work is
 * not fetched again on every request, from any instance.
 * @see draft-ietf-oauth-client-id-metadata-document
 */
export class ClientMetadataDocuments {
  readonly #store: KeyValueStore
  readonly #clock: Clock
  readonly #logger: Logger
  readonly #limits: DocumentFetchLimits
  readonly #cache: { defaultSeconds: number; maxSeconds: number }
  readonly #failureMs: number
  readonly #inFlight = new Map<string, Promise<RegisteredClient | undefined>>()
  readonly enabled: boolean

  constructor(
    options: ClientMetadataDocumentOptions,
    deps: { store: KeyValueStore; clock: Clock; logger: Logger },
  ) {
    this.#store = deps.store
    this.#clock = deps.clock
    this.#logger = deps.logger
    this.enabled = options.enabled ?? true
    this.#limits = {
      maxBytes: options.maxBytes ?? 5 * 1024,
      timeoutMs: options.timeoutMs ?? 5_000,
      allowLoopback: options.allowLoopback ?? false,
    }
    this.#cache = {
      defaultSeconds: options.defaultCacheSeconds ?? 300,
      maxSeconds: options.maxCacheSeconds ?? 24 * 3600,
    }
    const failureSeconds = options.failureCacheSeconds ?? 60
    if (!Number.isFinite(failureSeconds) || failureSeconds < 0) {
      throw new TypeError(
        'oauthServer: `clientIdMetadataDocuments.failureCacheSeconds` must be 0 or more seconds',
      )
    }
    this.#failureMs = failureSeconds * 1000
  }

  /** Whether this `client_id` names a metadata document (rather than a registered client). */
  isDocumentUrl(clientId: string): boolean {
    return this.enabled && /^https?:\/\//i.test(clientId)
  }

  /**
   * The client a document URL describes; undefined when it cannot be fetched or is invalid.
   * `beforeFetch` runs only when the document is really fetched (not cached, no fetch of it
   * under way here, no recent failure): the caller counts the fetch against the requester's
   * address there, and throws to refuse it.
   */
  async resolve(
    clientId: string,
    beforeFetch: () => Promise<void>,
  ): Promise<RegisteredClient | undefined> {
    const { url, refused } = parseClientIdUrl(clientId, this.#limits.allowLoopback)
    if (!url) {
      this.#refuse(clientId, refused)
      return undefined
    }
    const cached = await getJson<RegisteredClient>(this.#store, cacheKey(clientId))
    if (cached) return cached
    if (await this.#store.get(failureKey(clientId))) return undefined
    const joined = this.#inFlight.get(clientId)
    if (joined) return joined
    await beforeFetch()
    let pending = this.#inFlight.get(clientId)
    if (!pending) {
      pending = this.#load(clientId, url).finally(() => this.#inFlight.delete(clientId))
      this.#inFlight.set(clientId, pending)
    }
    return pending
  }

  async #load(clientId: string, url: URL): Promise<RegisteredClient | undefined> {
    try {
      const document = await fetchClientDocument(url, this.#limits)
      const client = this.#validate(clientId, url, document.body)
      const seconds = cacheSeconds(document.cacheControl, this.#cache)
      if (seconds > 0) await setJson(this.#store, cacheKey(clientId), client, seconds * 1000)
      return client
    } catch (error) {
      if (!(error instanceof DocumentFetchError || error instanceof OAuthError)) throw error
      this.#refuse(clientId, error.message)
      if (this.#failureMs > 0) {
        await this.#store.set(failureKey(clientId), error.message, { ttlMs: this.#failureMs })
      }
      return undefined
    }
  }

  /** Every refusal, on the URL's form or after a fetch, is logged with its reason. */
  #refuse(clientId: string, reason: string): void {
    this.#logger.warn({ clientId, reason }, 'oauth: client metadata refused')
  }

  #validate(clientId: string, url: URL, body: string): RegisteredClient {
    let parsed: unknown
    try {
      parsed = JSON.parse(body)
    } catch {
      throw new DocumentFetchError('the document is not JSON')
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new DocumentFetchError('the document is not a JSON object')
    }
    const document = parsed as Record<string, unknown>
    if (document.client_id !== clientId) {
      throw new DocumentFetchError('the document client_id differs from its URL')
    }
    for (const field of FORBIDDEN_FIELDS) {
      if (field in document) throw new DocumentFetchError(`the document must not carry ${field}`)
    }
    const method = document.token_endpoint_auth_method
    if (method !== undefined && method !== 'none') {
      throw new DocumentFetchError('token_endpoint_auth_method must be "none"')
    }
    if (document.redirect_uris === undefined) {
      throw new DocumentFetchError('the document has no redirect_uris')
    }
    const known = Object.fromEntries(
      Object.entries(document).filter(([field]) => KNOWN_FIELDS.has(field)),
    )
    const client = parseClientMetadata(known, {
      clientId,
      issuedAt: Math.floor(this.#clock.now() / 1000),
    })
    return { ...client, verifiedHost: url.host }
  }
}
