// Every promise in src/ is awaited, returned, or handed on on purpose. Domain code is asynchronous
// wherever it touches the store (SPEC 15), and a call whose promise is dropped runs after its
// transaction ended, or never reports its error: the TypeScript checker finds each expression
// statement of a promise type that is neither awaited, nor ended by .catch(), nor marked `void`
// (a promise started on purpose, whose errors are handled inside it).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import ts from 'typescript'
import { fileURLToPath } from 'node:url'
import { relative } from 'node:path'

const test = suite('structure: promises')
const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** 'file:line text' of each dropped promise in the program's src/ files. */
function droppedPromises(): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(`${ROOT}tsconfig.json`, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!
  const program = ts.createProgram({ rootNames: config.fileNames.filter((f) => f.includes('/src/')), options: config.options })
  // getPromisedTypeOfPromise is public in the checker, not yet in its typings: it also knows PromiseLike.
  const checker = program.getTypeChecker() as ts.TypeChecker & { getPromisedTypeOfPromise(type: ts.Type): ts.Type | undefined }
  const isPromise = (type: ts.Type): boolean =>
    type.isUnion() ? type.types.some(isPromise) : type.getSymbol()?.getName() === 'Promise' || checker.getPromisedTypeOfPromise(type) !== undefined
  const found: string[] = []
  for (const source of program.getSourceFiles()) {
    if (!source.fileName.includes('/src/') || source.isDeclarationFile) continue
    const visit = (node: ts.Node): void => {
      if (ts.isExpressionStatement(node)) {
        const expression = node.expression
        const caught = ts.isCallExpression(expression) && ts.isPropertyAccessExpression(expression.expression) && expression.expression.name.text === 'catch'
        if (ts.isCallExpression(expression) && !caught && isPromise(checker.getTypeAtLocation(expression))) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart(source))
          found.push(`${relative(ROOT, source.fileName)}:${line + 1} ${node.getText(source).slice(0, 80)}`)
        }
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
  }
  return found
}

test('no promise in src/ is dropped (awaited, returned, ended by .catch() or marked `void`)', () => {
  assert.equal(droppedPromises(), [])
})

test.run()
