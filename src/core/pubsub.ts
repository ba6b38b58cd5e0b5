import type { Redis, RedisConnections } from './redis.ts'

/** Receives the messages published on one channel. */
export type PubSubListener = (message: string) => void

/**
 * Messages between instances: what one publishes on a channel, every instance subscribed to it
 * receives now (nothing is kept for a subscriber that comes later). Memory for one process;
 * Redis PUBLISH/SUBSCRIBE when `REDIS_URL` is set.
 */
export interface PubSub {
  /** Publishes a message; resolves to how many subscriptions received it (0: nobody listens). */
  publish(channel: string, message: string): Promise<number>
  /**
   * Listens on a channel until the returned function is called. Resolves once the subscription
   * is active: a message published after that reaches the listener.
   */
  subscribe(channel: string, listener: PubSubListener): Promise<() => Promise<void>>
  close(): Promise<void>
}

/**
 * Publish and subscribe within this process.
 * @example
 * ```ts
 * const pubsub = new MemoryPubSub()
 * const stop = await pubsub.subscribe('posts', (id) => logger.info({ id }, 'post changed'))
 * ```
 */
export class MemoryPubSub implements PubSub {
  readonly #channels = new Map<string, Set<PubSubListener>>()

  async publish(channel: string, message: string): Promise<number> {
    const listeners = [...(this.#channels.get(channel) ?? [])]
    for (const listener of listeners) deliver(listener, message)
    return listeners.length
  }

  async subscribe(channel: string, listener: PubSubListener): Promise<() => Promise<void>> {
    let listeners = this.#channels.get(channel)
    if (!listeners) {
      listeners = new Set()
      this.#channels.set(channel, listeners)
    }
    // A listener subscribed twice is two subscriptions.
    const subscription: PubSubListener = (message) => listener(message)
    listeners.add(subscription)
    return async () => {
      const current = this.#channels.get(channel)
      current?.delete(subscription)
      if (current?.size === 0) this.#channels.delete(channel)
    }
  }

  async close(): Promise<void> {
    this.#channels.clear()
  }
}

/** Options of `RedisPubSub`. */
export interface RedisPubSubOptions {
  /** Channel prefix, so several apps or test runs can share one Redis. Default `kiln:`. */
  prefix?: string
}

/**
 * Redis PUBLISH/SUBSCRIBE. Publishing uses the shared request-path client; subscriptions share
 * one subscriber connection (opened on the first subscription, through `connections`, so it is
 * closed with the others), which ioredis subscribes again after a reconnection.
 * @example
 * ```ts
 * const connections = new RedisConnections('redis://127.0.0.1:6379')
 * const pubsub = new RedisPubSub(connections, connections.connect(), { prefix: 'tickets:' })
 * await pubsub.publish('posts', '42')
 * ```
 */
export class RedisPubSub implements PubSub {
  readonly #connections: RedisConnections
  readonly #publisher: Redis
  readonly #prefix: string
  readonly #channels = new Map<string, Set<PubSubListener>>()
  #subscriber: Redis | undefined

  constructor(connections: RedisConnections, publisher: Redis, options: RedisPubSubOptions = {}) {
    this.#connections = connections
    this.#publisher = publisher
    this.#prefix = options.prefix ?? 'kiln:'
  }

  async publish(channel: string, message: string): Promise<number> {
    return await this.#publisher.publish(this.#prefix + channel, message)
  }

  async subscribe(channel: string, listener: PubSubListener): Promise<() => Promise<void>> {
    const name = this.#prefix + channel
    const subscriber = this.#connect()
    let listeners = this.#channels.get(name)
    if (!listeners) {
      listeners = new Set()
      this.#channels.set(name, listeners)
    }
    const subscription: PubSubListener = (message) => listener(message)
    listeners.add(subscription)
    try {
      if (listeners.size === 1) await subscriber.subscribe(name)
    } catch (error) {
      this.#drop(name, subscription)
      throw error
    }
    return async () => {
      if (this.#drop(name, subscription)) {
        await subscriber.unsubscribe(name).catch(() => {})
      }
    }
  }

  async close(): Promise<void> {
    this.#channels.clear()
    const subscriber = this.#subscriber
    this.#subscriber = undefined
    if (subscriber) await subscriber.quit().catch(() => subscriber.disconnect())
  }

  /** Removes one subscription; true when it was the channel's last. */
  #drop(name: string, subscription: PubSubListener): boolean {
    const listeners = this.#channels.get(name)
    if (!listeners?.delete(subscription)) return false
    if (listeners.size > 0) return false
    this.#channels.delete(name)
    return true
  }

  #connect(): Redis {
    if (!this.#subscriber) {
      const subscriber = this.#connections.connect({ name: 'kiln-subscriber' })
      subscriber.on('message', (channel: string, message: string) => {
        for (const listener of [...(this.#channels.get(channel) ?? [])]) deliver(listener, message)
      })
      this.#subscriber = subscriber
    }
    return this.#subscriber
  }
}

/** A listener's failure is its own: it neither stops the others nor reaches the publisher. */
function deliver(listener: PubSubListener, message: string): void {
  try {
    listener(message)
  } catch {
    // The listener reports its own errors.
  }
}
