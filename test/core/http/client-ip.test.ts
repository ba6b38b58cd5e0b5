import { type AddressInfo, connect } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { afterEach, describe, expect, it } from 'vitest'
import { checkTrustProxy, UNKNOWN_CLIENT } from '../../../src/core/http/client-ip.ts'
import {
  clientAddress,
  loadAppConfig,
  resolveClientAddress,
  type TrustProxy,
} from '../../../src/core/index.ts'

const resolve = (forwardedFor: string | undefined, socket: string | undefined, trust: TrustProxy) =>
  resolveClientAddress({ forwardedFor, socket }, trust)

describe('resolveClientAddress', () => {
  it('without trust, reads the socket only: X-Forwarded-For is ignored', () => {
    expect(resolve('1.1.1.1', '10.0.0.9', false)).toBe('10.0.0.9')
    expect(resolve('1.1.1.1', undefined, false)).toBe(UNKNOWN_CLIENT)
  })

  it('trusting one proxy, takes the right-most hop, never a forged left-most one', () => {
    // The client sent "6.6.6.6"; the proxy appended the address it saw.
    expect(resolve('6.6.6.6, 203.0.113.7', '10.0.0.2', true)).toBe('203.0.113.7')
    expect(resolve('6.6.6.6, 203.0.113.7', '10.0.0.2', 1)).toBe('203.0.113.7')
  })

  it('trusting n proxies, takes the n-th hop from the right', () => {
    expect(resolve('6.6.6.6, 203.0.113.7, 10.0.0.5', '10.0.0.2', 2)).toBe('203.0.113.7')
  })

  it('trusting a list, skips trusted hops from the right, starting at the socket', () => {
    const proxies = ['10.0.0.0/8', '192.168.1.5']
    expect(resolve('6.6.6.6, 203.0.113.7, 10.1.2.3', '192.168.1.5', proxies)).toBe('203.0.113.7')
    // A socket that is no trusted proxy is the client, whatever the header says.
    expect(resolve('6.6.6.6', '198.51.100.1', proxies)).toBe('198.51.100.1')
    // Garbage written left of the trusted hops stops the walk at the last real address.
    expect(resolve('not-an-ip, 10.1.2.3', '192.168.1.5', proxies)).toBe('10.1.2.3')
    expect(resolve(undefined, '::ffff:10.0.0.1', proxies)).toBe('10.0.0.1')
  })

  it('refuses a bad trustProxy at start-up', () => {
    expect(() => checkTrustProxy(-1, 'test')).toThrow(TypeError)
    expect(() => checkTrustProxy(['10.0.0.0/99'], 'test')).toThrow(/10.0.0.0\/99/)
    expect(() => checkTrustProxy(['proxy.local'], 'test')).toThrow(TypeError)
  })
})

describe('TRUST_PROXY', () => {
  it('reads booleans, a number of proxies and a list of proxies', () => {
    expect(loadAppConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true)
    expect(loadAppConfig({ TRUST_PROXY: 'off' }).trustProxy).toBe(false)
    expect(loadAppConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2)
    expect(loadAppConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
    ])
    expect(() => loadAppConfig({ TRUST_PROXY: 'sometimes' })).toThrow(/TRUST_PROXY/)
  })
})

describe('clientAddress over a real socket, behind a proxy that appends the client address', () => {
  const servers: { close(): void }[] = []
  afterEach(() => {
    for (const server of servers.splice(0)) server.close()
  })

  async function start(trust: TrustProxy): Promise<number> {
    const app = new Hono()
    app.get('/', (c) => c.text(clientAddress(c, trust)))
    return await new Promise((done) => {
      const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) =>
        done(info.port),
      )
      servers.push(server)
    })
  }

  /** A raw request, as a proxy on 127.0.0.1 forwards it: the client's header plus its hop. */
  async function viaProxy(port: number, forwardedFor: string): Promise<string> {
    const socket = connect({ host: '127.0.0.1', port })
    await new Promise((done) => socket.once('connect', done))
    socket.end(
      `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Forwarded-For: ${forwardedFor}\r\nConnection: close\r\n\r\n`,
    )
    let text = ''
    for await (const chunk of socket) text += chunk
    return text.slice(text.indexOf('\r\n\r\n') + 4)
  }

  it('TRUST_PROXY off: the socket address, whatever the header says', async () => {
    const port = await start(loadAppConfig({ TRUST_PROXY: 'false' }).trustProxy)
    expect(await viaProxy(port, '6.6.6.6, 203.0.113.7')).toBe('127.0.0.1')
  })

  it('TRUST_PROXY on: the address the proxy appended, not the forged one', async () => {
    const port = await start(loadAppConfig({ TRUST_PROXY: 'true' }).trustProxy)
    expect(await viaProxy(port, '6.6.6.6, 203.0.113.7')).toBe('203.0.113.7')
  })

  it('TRUST_PROXY as a list naming the proxy: the first untrusted hop', async () => {
    const port = await start(loadAppConfig({ TRUST_PROXY: '127.0.0.1' }).trustProxy)
    expect(await viaProxy(port, '6.6.6.6, 203.0.113.7')).toBe('203.0.113.7')
    const server = servers[0] as unknown as { address(): AddressInfo }
    expect(server.address().address).toBe('127.0.0.1')
  })
})
