import { describe, expect, it } from 'vitest'
import { classifySender } from '../../src/messaging/identity.ts'
import { createOwnerDirectory, normalizePhone, staticOwners } from '../../src/messaging/index.ts'
import { isE164WithoutPlus } from '../../src/messaging/phone.ts'
import { capturingLogger } from './support.ts'

describe('phone numbers', () => {
  it('accepts E.164 digits without +', () => {
    expect(isE164WithoutPlus('12025550143')).toBe(true)
    expect(isE164WithoutPlus('447911123456')).toBe(true)
    for (const bad of [
      '+12025550143',
      '02025550143',
      '120255',
      '1234567890123456',
      '1202-555-0143',
      '',
    ]) {
      expect(isE164WithoutPlus(bad)).toBe(false)
    }
  })

  it('normalizes how people type numbers', () => {
    expect(normalizePhone('+1 (202) 555-0199')).toBe('12025550199')
    expect(normalizePhone('  12025550199 ')).toBe('12025550199')
    expect(normalizePhone('call me')).toBeUndefined()
  })
})

describe('sender identity', () => {
  it('classifies Owner(phone) and Customer(phone)', () => {
    const isOwner = staticOwners(['+1 202 555 0199'])
    expect(classifySender('12025550199', isOwner)).toEqual({ kind: 'Owner', phone: '12025550199' })
    expect(classifySender('12025550143', isOwner)).toEqual({
      kind: 'Customer',
      phone: '12025550143',
    })
  })
})

describe('createOwnerDirectory', () => {
  it('answers synchronously from the cached list and picks up changes on refresh', async () => {
    let owners = ['12025550199']
    const directory = await createOwnerDirectory({ load: async () => owners, refreshMs: 0 })
    expect(directory.isOwner('12025550199')).toBe(true)
    expect(directory.isOwner('12025550143')).toBe(false)
    owners = ['12025550143']
    expect(directory.isOwner('12025550199')).toBe(true)
    await directory.refresh()
    expect(directory.isOwner('12025550199')).toBe(false)
    expect(directory.isOwner('12025550143')).toBe(true)
    directory.close()
  })

  it('reloads in the background every refreshMs', async () => {
    let calls = 0
    let release: () => void = () => {}
    const reloaded = new Promise<void>((resolve) => {
      release = resolve
    })
    const directory = await createOwnerDirectory({
      load: async () => {
        calls++
        if (calls === 3) release()
        return calls >= 2 ? ['12025550143'] : []
      },
      refreshMs: 5,
    })
    expect(directory.isOwner('12025550143')).toBe(false)
    await reloaded
    expect(directory.isOwner('12025550143')).toBe(true)
    directory.close()
  })

  it('keeps the last good list when a reload fails, and logs it', async () => {
    let fail = false
    const { logger, text } = capturingLogger()
    const directory = await createOwnerDirectory({
      load: async () => {
        if (fail) throw new Error('database is down')
        return ['12025550199']
      },
      refreshMs: 0,
      logger,
    })
    fail = true
    await expect(directory.refresh()).rejects.toThrow('database is down')
    expect(directory.isOwner('12025550199')).toBe(true)
    directory.close()
    expect(text()).toBe('')
  })

  it('fails start-up when the first load fails', async () => {
    await expect(
      createOwnerDirectory({ load: () => Promise.reject(new Error('no table')), refreshMs: 0 }),
    ).rejects.toThrow('no table')
  })

  it('shares one load between concurrent refreshes', async () => {
    let calls = 0
    const directory = await createOwnerDirectory({
      load: async () => {
        calls++
        return []
      },
      refreshMs: 0,
    })
    await Promise.all([directory.refresh(), directory.refresh(), directory.refresh()])
    expect(calls).toBe(2)
    directory.close()
  })
})
