import path from 'node:path'
import vm from 'node:vm'
import { readFileSync } from 'node:fs'

/**
 * Compiles the CommonJS file `file` (with V8's code cache `cachedData` when given) and runs it as Node runs a
 * CommonJS module — its own `exports`, `module`, `require`, `__filename`, `__dirname` — returning `module.exports`
 * and the compiled script (`script.createCachedData()` makes a cache of what has been compiled so far). Node 20 has
 * no compile cache of its own (`module.enableCompileCache` came in 22.1); this is the same V8 mechanism. A cache
 * that does not fit (another V8, other flags, another source length) is rejected by V8 and the source compiled.
 *
 * @param require - The `require` the file gets (`createRequire(file)`).
 */
export function runCommonJs(file: string, cachedData: Buffer | undefined, require: NodeJS.Require): unknown {
  return compileCommonJs(file, cachedData, require).exports
}

/** `runCommonJs`, also returning the script (to make a cache from after a run). */
export function compileCommonJs(
  file: string,
  cachedData: Buffer | undefined,
  require: NodeJS.Require,
): { exports: unknown; script: vm.Script } {
  const source = readFileSync(file, 'utf8')
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
    // `import()` inside it (a package loaded lazily) resolves as in any module of this process.
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  })
  const module = { exports: {} as unknown }
  ;(script.runInThisContext() as (...args: unknown[]) => void)(module.exports, require, module, file, path.dirname(file))
  return { exports: module.exports, script }
}
