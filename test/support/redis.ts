import { randomBytes } from 'node:crypto'
import { describe } from 'vitest'
import { RedisConnections } from '../../src/core/index.ts'
import { redisUrl } from './env.ts'

export interface TestRedis {
  connections: RedisConnections
  /** A prefix unique to this test, for keys and queue names. */
  prefix: string
  /** Deletes every key under the prefix and closes the connections. */
  cleanup(): Promise<void>
}

export async function createTestRedis(): Promise<TestRedis> {
  if (!redisUrl) throw new Error('KILN_TEST_REDIS_URL is not set')
  const connections = new RedisConnections(redisUrl)
  const prefix = `kiln-test-${randomBytes(5).toString('hex')}`
  return {
    connections,
    prefix,
    async cleanup() {
      const redis = connections.connect()
      let cursor = '0'
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500)
        cursor = next
        if (keys.length > 0) await redis.del(...keys)
      } while (cursor !== '0')
      await connections.close()
    },
  }
}

export const describeWithRedis = describe.skipIf(redisUrl === undefined)
