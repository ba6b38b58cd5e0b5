import { describe, expect, it } from 'vitest'
import { createPasswordHasher, type PasswordUser, passwordUsers } from '../../src/session/index.ts'

describe('passwordUsers: the login callbacks from two lookups in the app user table', () => {
  const passwords = createPasswordHasher({ cost: 1024 })
  const rows = new Map<string, PasswordUser & { email: string }>()
  const users = passwordUsers({
    passwords,
    byEmail: async (email) => [...rows.values()].find((row) => row.email === email),
    byId: async (id) => rows.get(id),
  })

  it('answers the id for the right password, undefined for a wrong one or an unknown email', async () => {
    rows.set('7', {
      id: 7,
      email: 'ada@example.com',
      passwordHash: await passwords.hash('s3cret!'),
    })
    rows.set('8', { id: 8, email: 'no-password@example.com', passwordHash: null })
    const check = (email: string, password: string) => users.verifyCredentials({ email, password })
    expect(await check('ada@example.com', 's3cret!')).toBe('7')
    expect(await check('ada@example.com', 'wrong')).toBeUndefined()
    expect(await check('nobody@example.com', 's3cret!')).toBeUndefined()
    expect(await check('no-password@example.com', '')).toBeUndefined()
  })

  it('stamps a session with the current hash: a new password or a deleted user ends it', async () => {
    const first = await passwords.hash('one')
    rows.set('9', { id: 9, email: 'bo@example.com', passwordHash: first })
    expect(await users.credentialStamp('9')).toBe(first)
    const second = await passwords.hash('two')
    rows.set('9', { id: 9, email: 'bo@example.com', passwordHash: second })
    expect(await users.credentialStamp('9')).toBe(second)
    rows.delete('9')
    expect(await users.credentialStamp('9')).toBeUndefined()
    expect(await users.credentialStamp('not-an-id')).toBeUndefined()
  })

  it('uses createPasswordHasher() when the app passes no hasher', async () => {
    const hash = await createPasswordHasher().hash('default')
    const plain = passwordUsers({
      byEmail: async () => ({ id: 'u1', passwordHash: hash }),
      byId: async () => undefined,
    })
    expect(await plain.verifyCredentials({ email: 'x@example.com', password: 'default' })).toBe(
      'u1',
    )
  })
})
