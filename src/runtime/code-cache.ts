import { readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import vm from 'node:vm'

/**
 * The exports of `bundle`, a one-file bundle `npm run build` makes of the ES module `source` (scripts/build-bundles.mjs:
 * `<name>.bundle.cjs` beside its tsc output `<name>.js`), or undefined — when there is none, when it is older than
 * `source` (a `tsc`-only build since), or on a Node without `require` of ES modules (a package the bundle loads lazily
 * may be one) — and the caller imports the ES modules instead. The bundle is compiled with the V8 code cache the build
 * wrote beside it (`<bundle>.cache`, made after running the bundle once, so it holds the functions a run compiles)
 * when that is as new as the bundle; V8 checks that the cache fits this Node and these flags, and compiles the source
 * when it does not.
 *
 * @param bundle - Absolute path of the bundle.
 * @param source - Absolute path of the module it was made from.
 */
export function requireBundle<T>(bundle: string, source: string): T | undefined {
  if (process.features.require_module !== true) return undefined
  const built = statSync(bundle, { throwIfNoEntry: false })
  if (built === undefined || built.mtimeMs < (statSync(source, { throwIfNoEntry: false })?.mtimeMs ?? 0)) return undefined
  // From getBuiltinModule (there wherever require_module is), not an ES import: node:module's ES facade costs ~2 ms.
  const require = process.getBuiltinModule('node:module').createRequire(bundle)
  const cached = statSync(`${bundle}.cache`, { throwIfNoEntry: false })
  if (cached === undefined || cached.mtimeMs < built.mtimeMs) return require(bundle) as T
  return runCommonJs(bundle, readFileSync(`${bundle}.cache`), require) as T
}

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
