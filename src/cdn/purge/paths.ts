import { InvalidPurgePathError } from '../errors.ts'

/**
 * Normalizes purge paths to `dir/file.html` form: a leading slash or the CDN base URL is
 * stripped; `*` may appear alone (everything) or at the end (a prefix). Duplicates drop out.
 * Rejects anything a provider cannot take with `InvalidPurgePathError`.
 */
export function normalizePurgePaths(paths: readonly string[], cdnBase?: string): string[] {
  if (!Array.isArray(paths))
    throw new InvalidPurgePathError('Purge paths must be a list of strings')
  const base = cdnBase?.replace(/\/+$/, '')
  const out = new Set<string>()
  for (const raw of paths) {
    if (typeof raw !== 'string') throw new InvalidPurgePathError('Purge paths must be strings')
    let path = raw
    if (base && (path === base || path.startsWith(`${base}/`))) path = path.slice(base.length)
    else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
      throw new InvalidPurgePathError(`Purge path ${JSON.stringify(raw)} is not under CDN_URL`)
    }
    path = path.replace(/^\/+/, '')
    if (path === '') {
      throw new InvalidPurgePathError(
        'Empty purge path: name a file (index.html) or use * for everything',
      )
    }
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
    if (/[\u0000-\u001f\u007f]/.test(path)) {
      throw new InvalidPurgePathError(
        `Purge path ${JSON.stringify(raw)} contains a control character`,
      )
    }
    const star = path.indexOf('*')
    if (star !== -1 && star !== path.length - 1) {
      throw new InvalidPurgePathError(`Purge path ${JSON.stringify(raw)}: * may only end a path`)
    }
    out.add(path)
  }
  if (out.size === 0) throw new InvalidPurgePathError('No paths to purge')
  return [...out]
}

export const isWildcard = (path: string) => path.endsWith('*')
