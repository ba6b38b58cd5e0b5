// The rate limits and the body limit live in kiln/core (one throttle for the API, OAuth and
// logins) and are exported from there only; this folder holds the API's own two-stage throttle.
export { type TwoStageThrottle, twoStageThrottle } from './two-stage.ts'
