import { type PurgeApi, purgeAfterDeploy } from 'kilnjs/cdn'
import { describe, expect, it } from 'vitest'
import { isContentHashed } from '../../src/cdn/deploy.ts'

function recorder(): PurgeApi & { calls: string[][] } {
  const calls: string[][] = []
  return { provider: 'test', calls, purge: async (paths) => void calls.push(paths) }
}

describe('purgeAfterDeploy', () => {
  it('purges only the non-hashed HTML keys', async () => {
    const api = recorder()
    const purged = await purgeAfterDeploy(api, [
      'index.html',
      '/about/index.html',
      'blog/post-2026.htm',
      'assets/index-BxYz12Ab.js',
      'assets/app.3f9a1c2b.css',
      'assets/logo.png',
      'offline-4f3c2a1b9d.html',
      'robots.txt',
      'index.html',
    ])
    expect(purged).toEqual(['index.html', 'about/index.html', 'blog/post-2026.htm'])
    expect(api.calls).toEqual([purged])
  })

  it('sends nothing when no HTML key changed', async () => {
    const api = recorder()
    expect(await purgeAfterDeploy(api, ['assets/app.3f9a1c2b.js'])).toEqual([])
    expect(api.calls).toEqual([])
  })

  it('recognises content hashes, not ordinary names or dates', () => {
    expect(isContentHashed('app.3f9a1c2b.js')).toBe(true)
    expect(isContentHashed('index-BxYz12Ab.js')).toBe(true)
    expect(isContentHashed('chunk_a1b2c3d4e5.mjs')).toBe(true)
    expect(isContentHashed('about-us.html')).toBe(false)
    expect(isContentHashed('post-20260101.html')).toBe(false)
    expect(isContentHashed('introduction.html')).toBe(false)
  })

  it('accepts a custom hash rule', async () => {
    const api = recorder()
    await purgeAfterDeploy(api, ['a.html', 'b.v2.html'], { isHashed: (f) => f.includes('.v2.') })
    expect(api.calls).toEqual([['a.html']])
  })
})
