import type { KeyValueStore } from '../kv/key-value-store.ts'
import type { Logger } from '../logger.ts'
import { logFailure } from '../outages.ts'
import { type ClaimOutcome, claimListener, ListenerInProgressError } from './listener-claim.ts'

/** Handles one type of event. Registered per event type at bootstrap. */
export interface Listener<Event> {
  handle(event: Event): Promise<void> | void
}

/** Event type → event payload. An interface works too: `EventBus<MyEvents>`. */
export type EventMap = Record<string, unknown>

/** Options of `EventBus.emit`. */
export interface EmitOptions {
  /**
   * A stable id for this emission (a message id, say). With it, a listener that already
   * handled the emission is skipped when the same event is emitted again, e.g. on a job retry.
   */
  id?: string
}

/** A listener that threw, by name, and what it threw. */
export interface ListenerFailure {
  listener: string
  error: unknown
}

/**
 * Some listeners failed; the others ran. A queue job throws it so that its retry policy applies.
 * When every failure is a listener running elsewhere, it carries `postponeMs` and the queue
 * postpones the job without spending an attempt (see `PostponeJobError`).
 */
export class ListenersFailedError extends Error {
  readonly failures: ListenerFailure[]
  readonly postponeMs: number | undefined

  constructor(type: string, failures: ListenerFailure[]) {
    super(
      `${failures.length} listener(s) of ${type} failed: ${failures.map((f) => f.listener).join(', ')}`,
    )
    this.name = 'ListenersFailedError'
    this.failures = failures
    const busy = failures.map((f) => f.error).filter((e) => e instanceof ListenerInProgressError)
    this.postponeMs =
      busy.length > 0 && busy.length === failures.length
        ? Math.max(...busy.map((e) => e.retryAfterMs))
        : undefined
  }
}

/** Options of `new EventBus()`. */
export interface EventBusOptions {
  logger?: Logger
  /** Remembers which listeners handled an emission id. Memory, or Redis for many workers. */
  store?: KeyValueStore
  /** How long those marks are kept; the messaging provider retries for up to 7 days. */
  handledTtlMs?: number
  /**
   * How long a listener's claim on an emission lives unless renewed (it is renewed while the
   * listener runs): after a worker crashed mid-listener, a retry can run it again this soon.
   * Default 30 s, BullMQ's lock duration.
   */
  claimTtlMs?: number
}

interface Registration {
  name: string
  listener: Listener<unknown>
}

/**
 * Typed events with listeners per type. Every listener runs even when another fails;
 * failures are logged and returned. Listeners run one after another, in registration order.
 * @example
 * ```ts
 * import { EventBus } from 'kilnjs/core'
 *
 * const events = new EventBus<{ 'post.published': { id: string } }>({ logger, store: shared.kv })
 * events.on('post.published', async (post) => logger.info({ id: post.id }, 'published'))
 * await events.emit('post.published', { id: '42' })
 * ```
 */
export class EventBus<Events extends object = EventMap> {
  readonly #listeners = new Map<keyof Events, Registration[]>()
  readonly #logger: Logger | undefined
  readonly #store: KeyValueStore | undefined
  readonly #handledTtlMs: number
  readonly #claimTtlMs: number

  constructor(options: EventBusOptions = {}) {
    this.#logger = options.logger
    this.#store = options.store
    this.#handledTtlMs = options.handledTtlMs ?? 8 * 24 * 60 * 60 * 1000
    this.#claimTtlMs = options.claimTtlMs ?? 30_000
  }

  /** Registers a listener; `name` defaults to its class name and must be unique per type. */
  on<Type extends keyof Events & string>(
    type: Type,
    listener: Listener<Events[Type]> | ((event: Events[Type]) => Promise<void> | void),
    name?: string,
  ): this {
    const wrapped: Listener<Events[Type]> =
      typeof listener === 'function' ? { handle: listener } : listener
    const registrations = this.#listeners.get(type) ?? []
    const base =
      name ?? (typeof listener === 'function' ? listener.name : listener.constructor.name)
    const taken = new Set(registrations.map((r) => r.name))
    let unique = base || 'listener'
    for (let i = 2; taken.has(unique); i++) unique = `${base}#${i}`
    registrations.push({ name: unique, listener: wrapped as Listener<unknown> })
    this.#listeners.set(type, registrations)
    return this
  }

  listenerNames(type: keyof Events & string): string[] {
    return (this.#listeners.get(type) ?? []).map((r) => r.name)
  }

  /**
   * Runs every listener of `type`; resolves with the failures (empty when all succeeded).
   * With an emission id and a store, each listener first claims the emission atomically: a
   * listener that handled it is skipped, and one that another delivery is running right now
   * is reported as a ListenerInProgressError failure (so a queued job retries) without running.
   */
  async emit<Type extends keyof Events & string>(
    type: Type,
    event: Events[Type],
    options: EmitOptions = {},
  ): Promise<ListenerFailure[]> {
    const failures: ListenerFailure[] = []
    for (const { name, listener } of this.#listeners.get(type) ?? []) {
      const failure =
        options.id !== undefined && this.#store
          ? await this.#runOnce(
              this.#store,
              `event:${type}:${options.id}:${name}`,
              type,
              name,
              () => listener.handle(event),
            )
          : await this.#run(type, name, () => listener.handle(event))
      if (failure) failures.push(failure)
    }
    return failures
  }

  async #run(
    type: string,
    name: string,
    handle: () => Promise<void> | void,
  ): Promise<ListenerFailure | undefined> {
    try {
      await handle()
      return undefined
    } catch (error) {
      logFailure(
        this.#logger,
        'error',
        error,
        { err: error, event: type, listener: name },
        'event listener failed',
      )
      return { listener: name, error }
    }
  }

  async #runOnce(
    store: KeyValueStore,
    mark: string,
    type: string,
    name: string,
    handle: () => Promise<void> | void,
  ): Promise<ListenerFailure | undefined> {
    const times = { claimTtlMs: this.#claimTtlMs, handledTtlMs: this.#handledTtlMs }
    const lost = () =>
      this.#logger?.warn({ event: type, listener: name }, 'event listener claim lost')
    let outcome: ClaimOutcome
    try {
      outcome = await claimListener(store, mark, times, lost)
    } catch (error) {
      const fields = { err: error, event: type, listener: name }
      logFailure(this.#logger, 'error', error, fields, 'event listener not claimed')
      return { listener: name, error }
    }
    if (outcome.kind === 'handled') return undefined
    if (outcome.kind === 'busy') {
      this.#logger?.warn(
        { event: type, listener: name },
        'event listener already running elsewhere',
      )
      return { listener: name, error: new ListenerInProgressError(name, outcome.retryAfterMs) }
    }
    const { claim } = outcome
    const failure = await this.#run(type, name, handle)
    try {
      if (failure) await claim.release()
      else await claim.handled()
    } catch (error) {
      const fields = { err: error, event: type, listener: name }
      logFailure(this.#logger, 'error', error, fields, 'event listener mark not saved')
      return failure ?? { listener: name, error }
    }
    return failure
  }

  /** Like `emit`, but throws ListenersFailedError when any listener failed. */
  async emitOrThrow<Type extends keyof Events & string>(
    type: Type,
    event: Events[Type],
    options: EmitOptions = {},
  ): Promise<void> {
    const failures = await this.emit(type, event, options)
    if (failures.length > 0) throw new ListenersFailedError(type, failures)
  }
}
