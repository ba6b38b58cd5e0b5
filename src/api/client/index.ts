export { generateApiClient } from './generate.ts'
