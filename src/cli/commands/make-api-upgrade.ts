import { readFileSync, writeFileSync } from 'node:fs'
import pc from 'picocolors'
import { kilnVersion, readHeader } from '../scaffold/api/generated-header.ts'

/** The most lines of the new version shown for one edited file. */
const SHOWN_LINES = 12

/**
 * `make:api --upgrade`: each existing generated file is rewritten with this kiln's version when
 * its header's hash still matches its body; an edited file, or one kiln 0.1 wrote (no header),
 * is left as it is and listed with what to change. Files that do not exist are not written.
 */
export function upgradeApi(
  files: ReadonlyArray<{ path: string; contents: string; exists: boolean }>,
  print: (line: string) => void,
  show: (path: string) => string,
): { written: string[]; skipped: string[] } {
  const written: string[] = []
  const skipped: string[] = []
  print(`make:api --upgrade: to kiln ${kilnVersion()}`)
  for (const file of files) {
    const next = readHeader(file.contents)
    if (!file.exists || !next) {
      skipped.push(file.path)
      continue
    }
    const source = readFileSync(file.path, 'utf8')
    const header = readHeader(source)
    if (header?.untouched && header.body !== next.body) {
      writeFileSync(file.path, file.contents)
      written.push(file.path)
      print(pc.green(`✓ ${show(file.path)}: rewritten (kiln ${header.version} wrote it)`))
      continue
    }
    skipped.push(file.path)
    if (header?.untouched) continue
    print(
      pc.yellow(
        header
          ? `! ${show(file.path)} was edited after kiln ${header.version} wrote it: left as it is.`
          : `! ${show(file.path)} has no kiln header (kiln 0.1 wrote it): left as it is.`,
      ),
    )
    const missing = linesMissing(header?.body ?? source, next.body)
    if (missing.length === 0) {
      print(pc.dim('    It has every line of the new version.'))
      continue
    }
    print(
      pc.dim(
        '    Lines of the new version it lacks (see "Upgrading" in the getting-started docs):',
      ),
    )
    for (const line of missing.slice(0, SHOWN_LINES)) print(pc.dim(`    + ${line}`))
    if (missing.length > SHOWN_LINES)
      print(pc.dim(`    … and ${missing.length - SHOWN_LINES} more`))
  }
  if (written.length === 0) print('Nothing to rewrite: every unedited file is up to date.')
  return { written, skipped }
}

/** The new version's non-blank lines that the file has nowhere, in the new version's order. */
function linesMissing(current: string, next: string): string[] {
  const have = new Set(current.split('\n').map((line) => line.trim()))
  return next
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !have.has(line))
}
