import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

export interface LintReport {
  totals: { errors: number; warnings: number }
  problems: Array<{ severity: string; ruleId: string; message: string }>
}

/** `redocly lint` (its recommended rules) on a document, as JSON. */
export async function redoclyLint(doc: unknown): Promise<LintReport> {
  const dir = mkdtempSync(join(tmpdir(), 'kiln-openapi-lint-'))
  const file = join(dir, 'openapi.json')
  writeFileSync(file, JSON.stringify(doc))
  try {
    const result = await promisify(execFile)('npx', ['redocly', 'lint', file, '--format', 'json'], {
      maxBuffer: 20 * 1024 * 1024,
    }).catch((error: { stdout?: string }) => error)
    return JSON.parse(String(result.stdout)) as LintReport
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
