import type { Command } from 'commander'
import { register as apiCheck } from './api-check.ts'
import { register as apiKeyList } from './api-key-list.ts'
import { register as apiKeyRevoke } from './api-key-revoke.ts'
import { register as audit } from './audit.ts'
import { register as cdnPurge } from './cdn-purge.ts'
import { register as init } from './init.ts'
import { register as initMcp } from './init-mcp.ts'
import { register as makeApi } from './make-api.ts'
import { register as makeApiKey } from './make-api-key.ts'
import { register as makeClient } from './make-client.ts'
import { register as makeMessaging } from './make-messaging.ts'
import { register as makeRealtimeTrigger } from './make-realtime-trigger.ts'
import { register as mcp } from './mcp.ts'
import { register as migrate } from './migrate.ts'
import { register as queueWork } from './queue-work.ts'

/** Each command module exports one function that adds its command to the program. */
export type RegisterCommand = (program: Command) => void

export const commands: RegisterCommand[] = [
  init,
  initMcp,
  makeApi,
  makeApiKey,
  makeClient,
  makeRealtimeTrigger,
  apiKeyList,
  apiKeyRevoke,
  apiCheck,
  migrate,
  queueWork,
  makeMessaging,
  cdnPurge,
  mcp,
  audit,
]
