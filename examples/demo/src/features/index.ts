import type { Hono } from 'hono'
import type { DemoContext } from '../context.ts'
import { mountApi } from './api.ts'
import { mountMcp } from './mcp.ts'
import { mountMessaging } from './messaging.ts'
import { mountOAuth } from './oauth.ts'
import { mountStorage } from './storage.ts'

/** A capability mounting its routes on the demo app. */
export type Feature = (app: Hono, ctx: DemoContext) => void | Promise<void>

/** Every capability of the demo, mounted in this order (each lives in its own file here). */
export const features: Feature[] = [mountMessaging, mountOAuth, mountApi, mountStorage, mountMcp]
