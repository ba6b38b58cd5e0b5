import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RESOURCE_OPERATIONS } from '../../src/api/resource/index.ts'
import { type ScaffoldedApp, scaffoldApp, TRASH } from '../api/rest/generated-app.ts'

const demoControllers = resolve(import.meta.dirname, '../../examples/demo/src/api/controllers')

/** Each named route handler of a controller: its name, guard and body as written. */
interface Handler {
  name: string
  guard: string
  body: string
}

/** The named function expressions a Hono route chain is given, with the guard before each. */
function handlersOf(file: string): Handler[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest)
  const found: Handler[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const args = node.arguments
      const last = args[args.length - 1]
      if (last && ts.isFunctionExpression(last) && last.name && args.length >= 2) {
        found.push({
          name: last.name.text,
          guard: args[args.length - 2]!.getText(source),
          body: (last.body?.statements ?? []).map((s) => s.getText(source)).join('\n'),
        })
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/**
 * A handler with no capability logic of its own: the operation's guard, then one call into
 * kiln's operation of the same name. A capability kiln adds or fixes inside that operation
 * reaches the handler with no edit to it.
 */
function expectOneCallIntoKiln(file: string): void {
  const handlers = handlersOf(file)
  expect(handlers.length, file).toBeGreaterThan(0)
  for (const { name, guard, body } of handlers) {
    expect(RESOURCE_OPERATIONS, `${file}: ${name}`).toContain(name)
    expect(guard, `${file}: ${name}`).toBe(`kiln.scope.${name}`)
    // The event stream is the operation's own Response; every other answer is JSON.
    const call = `kiln\\.${name}\\(resourceCall\\(c\\)\\)`
    expect(body, `${file}: ${name}`).toMatch(
      new RegExp(
        name === 'events' ? `^return ${call}$` : `^return c\\.json\\(await ${call}(, 201)?\\)$`,
      ),
    )
  }
}

describe('each handler is one call into kiln', () => {
  let app: ScaffoldedApp
  beforeAll(async () => {
    app = await scaffoldApp('sqlite', { app: TRASH.sqlite })
  })
  afterAll(() => app?.cleanup())

  it('in the demo’s controllers', () => {
    const files = readdirSync(demoControllers).filter((name) => name.endsWith('.ts'))
    expect(files.length).toBeGreaterThan(0)
    for (const name of files) expectOneCallIntoKiln(join(demoControllers, name))
  })

  it('in the controllers make:api writes, with every operation the definition offers', () => {
    const file = join(app.outDir, 'controllers/documents.ts')
    expectOneCallIntoKiln(file)
    expect(
      handlersOf(file)
        .map((h) => h.name)
        .sort(),
    ).toEqual([...RESOURCE_OPERATIONS].sort())
  })

  it('and a handler with logic of its own is caught', () => {
    const file = join(app.outDir, 'controllers/documents.ts')
    const source = readFileSync(file, 'utf8')
    const edited = source.replace(
      'return c.json(await kiln.show(resourceCall(c)))',
      'const answer = await kiln.show(resourceCall(c))\n      delete answer.data.body\n      return c.json(answer)',
    )
    expect(edited).not.toBe(source)
    const copy = join(app.outDir, 'controllers/documents-edited.ts')
    ts.sys.writeFile(copy, edited)
    expect(() => expectOneCallIntoKiln(copy)).toThrow(/show/)
  })
})
