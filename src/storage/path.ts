import { InvalidPathError } from './errors.ts'

/**
 * Normalizes a disk-relative path to `a/b/c` form: `.` and empty segments drop out, `..`
 * pops a segment. Absolute paths, drive letters, backslashes, NUL bytes and any `..` that
 * climbs above the root are refused with `InvalidPathError`, the same way on every disk.
 * The root itself is `''`; `allowRoot` says whether the caller accepts it (directories do).
 */
export function normalizePath(path: string, { allowRoot = false } = {}): string {
  if (typeof path !== 'string') throw new InvalidPathError('expected a string')
  if (path.includes('\0')) throw new InvalidPathError('contains a NUL byte')
  if (path.includes('\\')) throw new InvalidPathError('contains a backslash')
  if (path.startsWith('/')) throw new InvalidPathError('absolute paths are not allowed')
  if (/^[A-Za-z]:/.test(path)) throw new InvalidPathError('drive-letter paths are not allowed')
  const segments: string[] = []
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue
    if (segment === '..') {
      if (segments.length === 0) throw new InvalidPathError('escapes the disk root')
      segments.pop()
      continue
    }
    segments.push(segment)
  }
  const normalized = segments.join('/')
  if (normalized === '' && !allowRoot) throw new InvalidPathError('names the disk root, not a file')
  return normalized
}

/** `a/b/c.txt` → `a/b`; a top-level file → `''`. */
export function parentOf(path: string): string {
  const slash = path.lastIndexOf('/')
  return slash === -1 ? '' : path.slice(0, slash)
}

/** Encodes each segment for use in a URL path: `my file.txt` → `my%20file.txt`. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/')
}

/** Joins a URL base and a path with exactly one slash between them. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`
}
