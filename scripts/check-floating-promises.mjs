#!/usr/bin/env node
// Lists Promise-typed expressions that are most likely a forgotten `await` (the store port and the engine are
// asynchronous, and a promise left floating still type-checks in many places): an expression statement, a condition,
// an operand of ! && || ?? === + <, a spread or template element, an argument or property whose type is
// unknown/any/{}/boolean/string/number, `expect(promise)` without .resolves/.rejects, and an async callback passed
// where the callee expects no promise (Array#map/filter/forEach/some…, an event handler). Deliberate ones (a lazy
// loader's `cache ??= import(…)`, a `.then().catch()` chain left running) are reported too: read each finding.
//
//   node scripts/check-floating-promises.mjs [tsconfig.json]     (a report to read, not a gate: exit 0)
import path from 'node:path'
import ts from 'typescript'

const root = process.cwd()
const cfgPath = path.resolve(root, process.argv[2] ?? 'tsconfig.json')
const cfg = ts.readConfigFile(cfgPath, ts.sys.readFile)
const parsed = ts.parseJsonConfigFileContent(cfg.config, ts.sys, path.dirname(cfgPath))
const program = ts.createProgram(parsed.fileNames, parsed.options)
const checker = program.getTypeChecker()
/** Test-runner hooks await what their callback returns. */
const AWAITING_CALLEES = new Set(['beforeAll', 'afterAll', 'beforeEach', 'afterEach', 'it', 'test', 'describe'])
const PROMISE_COMBINATORS = new Set(['all', 'race', 'allSettled', 'any', 'resolve', 'then'])

const isThenable = (type) => {
  if (!type) return false
  if (type.isUnion()) return type.types.some(isThenable)
  const then = type.getProperty('then')
  return !!then && checker.getTypeOfSymbol(then).getCallSignatures().length > 0
}
const loose = (type) => {
  if (!type) return false
  if (type.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any | ts.TypeFlags.Void | ts.TypeFlags.TypeParameter | ts.TypeFlags.NonPrimitive))
    return true
  if (type.isUnion()) return type.types.some((t) => loose(t) && !isThenable(t))
  return ['{}', 'Object', 'boolean', 'string', 'number'].includes(checker.typeToString(type))
}
const calleeName = (call) =>
  ts.isPropertyAccessExpression(call.expression) ? call.expression.name.text : ts.isIdentifier(call.expression) ? call.expression.text : ''
const OPERATORS = new Set([
  ts.SyntaxKind.AmpersandAmpersandToken,
  ts.SyntaxKind.BarBarToken,
  ts.SyntaxKind.QuestionQuestionToken,
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
  ts.SyntaxKind.PlusToken,
  ts.SyntaxKind.LessThanToken,
  ts.SyntaxKind.GreaterThanToken,
])

const findings = []
for (const sf of program.getSourceFiles()) {
  if (sf.isDeclarationFile || sf.fileName.includes('/node_modules/')) continue
  const report = (node, why) => {
    const { line, character } = sf.getLineAndCharacterOfPosition(node.getStart(sf))
    const text = node.getText(sf).replace(/\s+/g, ' ').slice(0, 90)
    findings.push(`${path.relative(root, sf.fileName)}:${line + 1}:${character + 1}: ${why}: ${text}`)
  }
  const visit = (node) => {
    if (ts.isExpression(node) && !ts.isParenthesizedExpression(node) && !ts.isPropertyAccessExpression(node.parent)) {
      let type
      try {
        type = checker.getTypeAtLocation(node)
      } catch {
        type = undefined
      }
      if (isThenable(type)) {
        let q = node.parent
        while (ts.isParenthesizedExpression(q)) q = q.parent
        if (ts.isAwaitExpression(q) || ts.isVoidExpression(q) || ts.isReturnStatement(q) || ts.isArrowFunction(q)) {
          // awaited, discarded on purpose, or handed to the caller
        } else if (ts.isExpressionStatement(q)) report(node, 'floating')
        else if (
          (ts.isIfStatement(q) || ts.isWhileStatement(q) || ts.isDoStatement(q) || ts.isConditionalExpression(q)) &&
          (q.expression ?? q.condition) === node
        )
          report(node, 'condition')
        else if (ts.isPrefixUnaryExpression(q) && q.operator === ts.SyntaxKind.ExclamationToken) report(node, 'negated')
        else if (ts.isBinaryExpression(q) && OPERATORS.has(q.operatorToken.kind)) report(node, 'operand')
        else if (ts.isTemplateSpan(q) || ts.isSpreadElement(q) || ts.isSpreadAssignment(q)) report(node, 'spread or template')
        else if (ts.isCallExpression(q) && q.arguments.includes(node)) {
          const name = calleeName(q)
          if (name === 'expect') {
            const after = q.parent
            if (!(ts.isPropertyAccessExpression(after) && (after.name.text === 'resolves' || after.name.text === 'rejects')))
              report(node, 'expect(promise)')
          } else if (!PROMISE_COMBINATORS.has(name)) {
            const ctx = checker.getContextualType(node)
            if (ctx && loose(ctx) && !isThenable(ctx)) report(node, `argument typed ${checker.typeToString(ctx)}`)
          }
        } else if (ts.isPropertyAssignment(q) || ts.isShorthandPropertyAssignment(q) || ts.isArrayLiteralExpression(q)) {
          const ctx = checker.getContextualType(node)
          if (
            ctx &&
            loose(ctx) &&
            !isThenable(ctx) &&
            !(ts.isArrayLiteralExpression(q) && ts.isCallExpression(q.parent) && PROMISE_COMBINATORS.has(calleeName(q.parent)))
          )
            report(node, `value typed ${checker.typeToString(ctx)}`)
        }
      }
    }
    if (
      (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) &&
      ts.isCallExpression(node.parent) &&
      !AWAITING_CALLEES.has(calleeName(node.parent))
    ) {
      const sig = checker.getSignatureFromDeclaration(node)
      const ret = sig && checker.getReturnTypeOfSignature(sig)
      if (isThenable(ret)) {
        const expected = checker.getContextualType(node)?.getCallSignatures()[0]
        const want = expected && checker.getReturnTypeOfSignature(expected)
        if (want && !isThenable(want) && loose(want))
          report(node, `async callback where ${checker.typeToString(want)} is expected (${calleeName(node.parent)})`)
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(sf)
}
for (const f of findings) console.log(f)
console.error(`${findings.length} finding(s) in ${path.relative(root, cfgPath)}`)
