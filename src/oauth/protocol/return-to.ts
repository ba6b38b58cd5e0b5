// Open-redirect protection lives in kiln/core, shared with the login helper.
export { safeReturnTo } from '../../core/session/return-to.ts'
