import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import pc from 'picocolors'
import type { ApiScaffold } from './plan.ts'
import type { ModelTemplateInput } from './template-input.ts'

/**
 * What existing controllers of other models gain or could gain for `include=`: relations to the
 * models just generated. A `defineResource` takes them from the schema's foreign keys at run
 * time, so it gains them with no edit; a `defineListQuery` (kiln 0.1) names its relations, and
 * the lines to add are printed, never written: a controller is the developer's file.
 */
export function printNewRelations(
  print: (line: string) => void,
  scaffold: ApiScaffold,
  outDir: string,
  show: (path: string) => string,
): void {
  const controllerOf = (model: ModelTemplateInput) =>
    join(outDir, 'controllers', `${model.names.pluralFile}.ts`)
  // Under `--all` the models whose controllers existed are among the chosen ones: what is new
  // is what this run creates.
  const created = new Set(scaffold.files.filter((file) => !file.exists).map((file) => file.path))
  const everyModel = [...scaffold.models, ...scaffold.others]
  const generated = new Set(
    everyModel.filter((m) => created.has(controllerOf(m))).map((m) => m.names.table),
  )
  for (const other of everyModel) {
    const path = controllerOf(other)
    if (created.has(path) || !existsSync(path)) continue
    const source = readFileSync(path, 'utf8')
    const gained = (other.relations ?? []).filter(
      (relation) =>
        relation.tables.some((table) => generated.has(table)) &&
        !new RegExp(`\\b${relation.name}:\\s*(belongsTo|hasMany)\\(`).test(source),
    )
    if (gained.length === 0) continue
    const names = gained.map((r) => r.name).join(', ')
    if (/\bdefineResource\(/.test(source) && !/relations:\s*'declared'/.test(source)) {
      print(
        pc.cyan(
          `ℹ ${show(path)} includes ${names} now: its defineResource takes relations from the schema's foreign keys (the file is left as it is)`,
        ),
      )
      continue
    }
    const helpers = [...new Set(gained.map((relation) => relation.helper))].join(', ')
    const tables = [...new Set(gained.flatMap((relation) => relation.tables))].join(', ')
    print(
      pc.cyan(
        `ℹ ${show(path)} could now include ${names}: add to the include of its defineListQuery (with ${helpers} from 'kilnjs/api' and ${tables} from the schema):`,
      ),
    )
    for (const relation of gained) print(pc.dim(`    ${relation.name}: ${relation.expr},`))
  }
}
