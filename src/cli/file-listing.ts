import pc from 'picocolors'

/** A file a scaffolding command plans to write, change, or leave as it is. */
export interface PlannedFile {
  path: string
  action: 'create' | 'update' | 'skip'
}

const PLANNED = { create: 'new   ', update: 'change', skip: 'skip  ' }

/**
 * Lists a command's files, shown relative to the app. Before the question that confirms them the
 * verbs say what would happen (`new`, `change`); once written, what did (`create`, `update`), so
 * no line ever says `create` for a file that was not written.
 */
export function printFiles(
  print: (line: string) => void,
  files: readonly PlannedFile[],
  show: (path: string) => string,
  written: boolean,
): void {
  for (const { path, action } of files) {
    if (action === 'skip') print(pc.dim(`  skip   ${show(path)} (exists)`))
    else print(`  ${written ? action : PLANNED[action]} ${show(path)}`)
  }
}
