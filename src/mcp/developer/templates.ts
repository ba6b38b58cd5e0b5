import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'

export const TEMPLATE_CATEGORIES = ['storage', 'api', 'messaging'] as const
export type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number]

export interface CodeTemplateInfo {
  category: TemplateCategory
  name: string
  title: string
  description: string
}

export interface CodeTemplate extends CodeTemplateInfo {
  /** TypeScript that compiles against kiln (the project's typecheck covers these files). */
  code: string
}

/** The catalog: each entry is a real .ts file under `templates/<category>/<name>.ts`. */
export const CODE_TEMPLATES: readonly CodeTemplateInfo[] = [
  {
    category: 'storage',
    name: 'single-file-upload',
    title: 'Single-file upload',
    description:
      'POST /uploads (multipart field `file`): stores the file on the public disk under a random name and returns its path and URL.',
  },
  {
    category: 'storage',
    name: 'avatar-upload',
    title: 'Avatar upload with validation',
    description:
      'PUT /me/avatar: signed-in users only; PNG, JPEG or WebP up to 2 MB, checked by type and first bytes; replaces the previous avatar; returns the CDN URL.',
  },
  {
    category: 'storage',
    name: 'temporary-url',
    title: 'Temporary URL generation',
    description:
      'GET /files/:path/link?minutes=15: an expiring link to a private file (presigned on S3, kiln-signed and served by storageRoutes on local disks).',
  },
  {
    category: 'api',
    name: 'custom-route',
    title: 'Custom API route with a scope',
    description:
      'A route group beside the generated API: API-key auth, the `api` rate limiter, and a route that requires the `reports:delete` scope.',
  },
  {
    category: 'api',
    name: 'per-key-limit',
    title: 'Rate limit per API key',
    description:
      'A named limiter of 600 requests per minute per key (`key:<id>`), shared through Redis, with a per-IP fallback.',
  },
  {
    category: 'messaging',
    name: 'auto-reply-listener',
    title: 'Auto-reply listener',
    description:
      'A Listener<MessagingTextReceived> that answers customers (not owners) with a text inside the 24-hour window.',
  },
  {
    category: 'messaging',
    name: 'send-template',
    title: 'Send a template message',
    description:
      'Sends an approved template with text and currency parameters, the way to reach customers outside the 24-hour window.',
  },
]

/**
 * Where the template sources are: beside this module when running from source, else the
 * package's `src/mcp/developer/templates` (a compiled build has no .ts files of its own).
 */
function templatePath(info: CodeTemplateInfo): string {
  const relativePath = `${info.category}/${info.name}.ts`
  const candidates = [
    new URL(`./templates/${relativePath}`, import.meta.url),
    new URL(`../../../src/mcp/developer/templates/${relativePath}`, import.meta.url),
  ].map((url) => fileURLToPath(url))
  const found = candidates.find((path) => existsSync(path))
  if (!found) throw new Error(`The code template ${relativePath} is missing from this installation`)
  return found
}

/** The templates of a category (all when none is given), with their code read from disk. */
export async function readCodeTemplates(
  category?: TemplateCategory,
  name?: string,
): Promise<CodeTemplate[]> {
  const chosen = CODE_TEMPLATES.filter(
    (info) =>
      (category === undefined || info.category === category) &&
      (name === undefined || info.name === name),
  )
  return Promise.all(
    chosen.map(async (info) => ({ ...info, code: await readFile(templatePath(info), 'utf8') })),
  )
}
