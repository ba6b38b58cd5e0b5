import '../core/check-peers.ts'

export { safeReturnTo } from '../core/http/return-to.ts'
export type { LoginPageProps } from './login-page.ts'
export { type LoginRoutesOptions, loginRoutes, type VerifyCredentials } from './login-routes.ts'
export {
  type PasswordUser,
  type PasswordUsers,
  type PasswordUsersOptions,
  passwordUsers,
} from './password-users.ts'
export {
  createPasswordHasher,
  type PasswordHasher,
  type PasswordHasherOptions,
} from './passwords.ts'
export {
  createSessionStore,
  type Session,
  SessionStore,
  type SessionStoreOptions,
} from './session-store.ts'
