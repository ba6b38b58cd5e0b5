import type ts from 'typescript'
import { requireOptional } from '../../core/optional-package.ts'

export interface ListenerImplementation {
  /** The event type argument as written: `MessagingTextReceived`. */
  event: string
  /** The implementing class: `TextReceivedListener` (`default` for an anonymous default export). */
  listener: string
}

/**
 * Finds every class that `implements Listener<T>` in a TypeScript source, with the TypeScript
 * compiler's parser: qualified names (`core.Listener<T>`) and import aliases
 * (`import { Listener as L }`) count, comments and strings do not.
 */
export function findListenerImplementations(
  source: string,
  fileName = 'listeners.ts',
): ListenerImplementation[] {
  const ts = typescript()
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const listenerNames = new Set(['Listener'])
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement)) continue
    const bindings = statement.importClause?.namedBindings
    if (!bindings || !ts.isNamedImports(bindings)) continue
    for (const element of bindings.elements) {
      if ((element.propertyName ?? element.name).text === 'Listener')
        listenerNames.add(element.name.text)
    }
  }
  const found: ListenerImplementation[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      for (const clause of node.heritageClauses ?? []) {
        if (clause.token !== ts.SyntaxKind.ImplementsKeyword) continue
        for (const type of clause.types) {
          const argument = type.typeArguments?.[0]
          if (!argument || !listenerNames.has(rightmostName(type.expression))) continue
          found.push({ event: argument.getText(file), listener: className(node) })
        }
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return found
}

/** The parser is a developer tool: loaded on first use, so a running app needs no typescript. */
function typescript(): typeof import('typescript') {
  return requireOptional('typescript', 'Finding listener implementations')
}

function rightmostName(expression: ts.Expression): string {
  const ts = typescript()
  if (ts.isIdentifier(expression)) return expression.text
  if (ts.isPropertyAccessExpression(expression)) return expression.name.text
  return ''
}

function className(node: ts.ClassDeclaration | ts.ClassExpression): string {
  const ts = typescript()
  if (node.name) return node.name.text
  // `const X = class implements Listener<T> {}`
  if (
    ts.isClassExpression(node) &&
    ts.isVariableDeclaration(node.parent) &&
    ts.isIdentifier(node.parent.name)
  ) {
    return node.parent.name.text
  }
  return 'default'
}
