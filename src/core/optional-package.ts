import { createRequire } from 'node:module'

/**
 * A package kiln loads only for the feature that needs it (a database driver, Redis, S3, the
 * docs page, the CLI's TypeScript loader) is not installed. The message names the package and
 * the command that installs it. A setup mistake, not bad input: thrown where the feature starts.
 */
export class MissingPackageError extends TypeError {
  readonly packageName: string

  constructor(packageName: string, purpose: string, options?: { cause?: unknown }) {
    super(
      `${purpose} needs the package ${packageName}, which is not installed: npm install ${packageName}`,
      options,
    )
    this.name = 'MissingPackageError'
    this.packageName = packageName
  }
}

/** True when `error` says that `packageName` itself (not something inside it) was not found. */
export function isMissingPackage(error: unknown, packageName: string): boolean {
  const code = (error as { code?: unknown } | undefined)?.code
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false
  const message = error instanceof Error ? error.message : ''
  return message.includes(`'${packageName}'`) || message.includes(`"${packageName}"`)
}

/**
 * Runs `load` (a dynamic `import()` of an optional peer, written out so its types stay known)
 * and turns "package not found" into a MissingPackageError naming `packageName`.
 */
export async function importOptional<T>(
  packageName: string,
  purpose: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load()
  } catch (error) {
    if (isMissingPackage(error, packageName)) {
      throw new MissingPackageError(packageName, purpose, { cause: error })
    }
    throw error
  }
}

const requireFromKiln = createRequire(import.meta.url)

/**
 * The synchronous form, for code that must construct a client at once (ioredis, BullMQ): the
 * package is required the first time the feature is used, never at import time.
 */
export function requireOptional<T>(packageName: string, purpose: string): T {
  try {
    return requireFromKiln(packageName) as T
  } catch (error) {
    if (isMissingPackage(error, packageName)) {
      throw new MissingPackageError(packageName, purpose, { cause: error })
    }
    throw error
  }
}
