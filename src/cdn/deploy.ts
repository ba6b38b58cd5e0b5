import type { PurgeApi } from './purge/types.ts'

/** Options of `purgeAfterDeploy`. */
export interface PurgeAfterDeployOptions {
  /** Decides whether a file name carries a content hash; the default is `isContentHashed`. */
  isHashed?: (fileName: string) => boolean
}

/**
 * A name segment of 8+ letters and digits holding both (`app.3f9a1c2b.js`, `index-BxYz12Ab.html`)
 * is a content hash: such URLs are immutable.
 */
export function isContentHashed(fileName: string): boolean {
  const name = fileName.slice(fileName.lastIndexOf('/') + 1)
  const stem = name.includes('.') ? name.slice(0, name.lastIndexOf('.')) : name
  return stem
    .split(/[.\-_~]/)
    .some(
      (part) =>
        part.length >= 8 && /^[A-Za-z0-9]+$/.test(part) && /\d/.test(part) && /[A-Za-z]/.test(part),
    )
}

/**
 * The purge policy after promoting a deployment: purge only the HTML keys without a content
 * hash (they keep their URL between deploys); hashed assets are immutable and never purged.
 * Returns the keys purged (none → no request).
 */
export async function purgeAfterDeploy(
  purgeApi: PurgeApi,
  files: readonly string[],
  options: PurgeAfterDeployOptions = {},
): Promise<string[]> {
  const hashed = options.isHashed ?? isContentHashed
  const keys = [
    ...new Set(
      files
        .map((file) => file.replace(/^\/+/, ''))
        .filter((file) => /\.html?$/i.test(file) && !hashed(file)),
    ),
  ]
  if (keys.length > 0) await purgeApi.purge(keys)
  return keys
}
