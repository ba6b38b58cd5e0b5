// Open-redirect protection lives in kiln/core's HTTP edge, shared with kilnjs/session's login.
export { safeReturnTo } from '../../core/http/return-to.ts'
