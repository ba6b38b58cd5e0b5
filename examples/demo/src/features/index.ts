import type { Hono } from 'hono'
import type { McpRateLimitOptions, McpServer } from 'kilnjs/mcp'
import type { DemoContext } from '../context.ts'
import { mountApi } from './api.ts'
import { mountMcp } from './mcp.ts'
import { mountMessaging } from './messaging.ts'
import { mountOAuth } from './oauth.ts'
import { mountStorage } from './storage.ts'

/** What an embedding program adds to the demo (the conformance run adds the suite's tools). */
export interface DemoAppOptions {
  mcp?: {
    /** Tools registered on `/mcp` beside the data tools. */
    register?: ReadonlyArray<(server: McpServer) => void>
    /** Declare the `logging` capability on `/mcp`. */
    logging?: boolean
    /** Other limits per client and user than kiln's defaults (the conformance run's one token). */
    rateLimit?: Pick<McpRateLimitOptions, 'perClient' | 'perUser'>
  }
}

/** A capability mounting its routes on the demo app. */
export type Feature = (app: Hono, ctx: DemoContext, options: DemoAppOptions) => void | Promise<void>

/** Every capability of the demo, mounted in this order (each lives in its own file here). */
export const features: Feature[] = [mountMessaging, mountOAuth, mountApi, mountStorage, mountMcp]
