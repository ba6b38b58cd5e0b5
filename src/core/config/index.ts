export {
  type AppConfig,
  type AppConfigDefaults,
  appEnvSchema,
  loadAppConfig,
} from './app-config.ts'
export { ConfigError, type Env, envBoolean, envUrl, parseEnv } from './parse-env.ts'
