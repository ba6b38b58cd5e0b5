import { afterEach, beforeEach, expect, it } from 'vitest'
import {
  BullMqQueue,
  DependencyError,
  RedisConnections,
  RedisKeyValueStore,
} from '../../src/core/index.ts'
import { redisUrl } from '../support/env.ts'
import { createTestRedis, describeWithRedis, type TestRedis } from '../support/redis.ts'
import { TcpProxy } from '../support/tcp-proxy.ts'
import { sleep } from './backends.ts'

describeWithRedis('Redis outage on request-path connections', () => {
  let test: TestRedis
  let proxy: TcpProxy
  let connections: RedisConnections

  beforeEach(async () => {
    test = await createTestRedis()
    proxy = await TcpProxy.forUrl(redisUrl ?? '').start()
    connections = new RedisConnections(`redis://127.0.0.1:${proxy.port}`)
  })
  afterEach(async () => {
    await connections.close()
    await proxy.close()
    await test.cleanup()
  })

  it('commands fail at once during the outage, never land later, and work again after it', async () => {
    const client = connections.connect()
    const store = new RedisKeyValueStore(client, { prefix: `${test.prefix}:` })
    await store.set('before', '1')
    expect(await store.get('before')).toBe('1')

    proxy.block()
    while (client.status === 'ready') await sleep(10)
    const during = store.set('during', 'lost').catch((error: unknown) => error)
    // Redis is back before the client's next reconnection attempt: a queued command would land.
    proxy.unblock()
    expect(await during).toBeInstanceOf(Error)
    for (;;) {
      const value = await store.get('before').catch(() => undefined)
      if (value === '1') break
      await sleep(50)
    }
    const direct = test.connections.connect()
    expect(await direct.get(`${test.prefix}:during`)).toBeNull()
  })

  it('enqueue rejects during the outage with a dependency error naming host and port', async () => {
    const queue = new BullMqQueue({ connections, name: 'jobs', prefix: test.prefix })
    try {
      await queue.enqueue('job', { n: 1 })
      proxy.block()
      const error = await queue.enqueue('job', { n: 2 }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(DependencyError)
      expect((error as Error).message).toMatch(
        new RegExp(`^(Redis at 127\\.0\\.0\\.1:${proxy.port} is unreachable|could not enqueue)`),
      )
      proxy.unblock()
      for (;;) {
        const result = await queue.enqueue('job', { n: 3 }).catch(() => undefined)
        if (result) break
        await sleep(50)
      }
    } finally {
      await queue.close()
    }
  })
})
