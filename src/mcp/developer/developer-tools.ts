import { existsSync, statSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { isAbsolute, relative, resolve } from 'node:path'
import type { McpServer } from '@modelcontextprotocol/server'
import { z } from 'zod'
import type { Env } from '../../core/config/index.ts'
import type { KilnConfig } from '../../db/index.ts'
import { messagingEnvStatus } from '../../messaging/index.ts'
import { READ_ONLY_TOOL_ANNOTATIONS } from '../annotations.ts'
import { ToolError } from '../tool-error.ts'
import { runTool } from '../tool-result.ts'
import { findListenerImplementations } from './listeners.ts'
import { readCodeTemplates, TEMPLATE_CATEGORIES } from './templates.ts'

export interface DeveloperToolsOptions {
  /** The app's root: the folder of kiln.config.ts. */
  root: string
  kilnConfig: KilnConfig
  /** The environment whose MSG_* variables are reported (names only, never values). */
  env?: Env
}

/** Where `kilnjs make:messaging` writes when kiln.config.ts names no `messaging` folder. */
export const DEFAULT_MESSAGING_DIR = 'src/messaging'
export const LISTENER_FILE = 'listeners.ts'

export const DEVELOPER_TOOL_NAMES = [
  'messaging_config_status',
  'messaging_webhook_events',
  'code_templates',
] as const

/**
 * The local development tools of `kilnjs mcp`: messaging setup status, the listeners of the
 * messaging scaffold, and code templates that compile against kiln.
 */
export function registerDeveloperTools(server: McpServer, options: DeveloperToolsOptions): void {
  const { root, kilnConfig } = options
  const env = options.env ?? process.env
  const messagingDir = kilnConfig.messaging ?? DEFAULT_MESSAGING_DIR

  server.registerTool(
    'messaging_config_status',
    {
      title: 'Messaging configuration status',
      description:
        'Which MSG_* environment variables are present or missing (never their values) and ' +
        'whether the messaging scaffold directory exists.',
      annotations: READ_ONLY_TOOL_ANNOTATIONS,
    },
    () => runTool(async () => messagingStatus(root, env, messagingDir)),
  )

  server.registerTool(
    'messaging_webhook_events',
    {
      title: 'Messaging webhook listeners',
      description:
        'Parses the messaging listener file and returns each class implementing Listener<T>: ' +
        `the event type and the listener class. Default file: ${messagingDir}/${LISTENER_FILE}.`,
      inputSchema: z.object({
        file: z
          .string()
          .min(1)
          .optional()
          .describe("A listener file relative to the app's root, instead of the default"),
      }),
      annotations: READ_ONLY_TOOL_ANNOTATIONS,
    },
    ({ file }) =>
      runTool(() =>
        listenersIn(root, file ?? `${messagingDir}/${LISTENER_FILE}`, file !== undefined),
      ),
  )

  server.registerTool(
    'code_templates',
    {
      title: 'Code templates',
      description:
        'TypeScript templates that compile against kiln. storage: single-file upload, avatar ' +
        'upload with validation, temporary URL generation; api: custom routes and limits; ' +
        'messaging: listeners and template messages.',
      inputSchema: z.object({
        category: z.enum(TEMPLATE_CATEGORIES).optional().describe('Only this category'),
        name: z.string().min(1).optional().describe('Only the template of this name'),
      }),
      annotations: READ_ONLY_TOOL_ANNOTATIONS,
    },
    ({ category, name }) =>
      runTool(async () => {
        const templates = await readCodeTemplates(category, name)
        if (templates.length === 0) {
          throw new ToolError(`No template named "${name}"${category ? ` in ${category}` : ''}`)
        }
        return { templates }
      }),
  )
}

/** Which MSG_* variables are set (never their values), and where the scaffold stands. */
function messagingStatus(root: string, env: Env, messagingDir: string) {
  const { present, missing } = messagingEnvStatus(env)
  const dir = resolve(root, messagingDir)
  const exists = existsSync(dir) && statSync(dir).isDirectory()
  return {
    configured: missing.length === 0,
    variables: { present, missing },
    scaffold: {
      directory: relative(root, dir) || '.',
      exists,
      listener_file_exists: existsSync(resolve(dir, LISTENER_FILE)),
    },
    next_steps: [
      ...(missing.length > 0 ? [`Set ${missing.join(', ')} in the environment`] : []),
      ...(exists ? [] : ['Run `npx kilnjs make:messaging` to create the scaffold']),
    ],
  }
}

/** The listeners of a file inside the app's root (a path the client gave must stay inside). */
async function listenersIn(root: string, file: string, given: boolean) {
  const show = (path: string) => relative(root, path) || '.'
  const target = resolve(root, file)
  const inside = relative(root, target)
  if (given && (isAbsolute(file) || inside.startsWith('..') || isAbsolute(inside))) {
    throw new ToolError("file must be a path inside the app's root")
  }
  if (!existsSync(target) || !statSync(target).isFile()) {
    throw new ToolError(
      `No listener file at ${show(target)}: run \`npx kilnjs make:messaging\` to create it`,
    )
  }
  const listeners = findListenerImplementations(await readFile(target, 'utf8'), target)
  return { file: show(target), listeners }
}
