// Bundles the browser viewer (src/viewer) into dist/viewer, which `mnemo serve` serves at /.
// Preact and the app become one minified ES module, app.js; index.html, app.css and favicon.svg are copied.
// Usage: node scripts/build-viewer.mjs [--watch]
import { copyFile, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import * as esbuild from 'esbuild'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const src = path.join(root, 'src/viewer')
const out = path.join(root, 'dist/viewer')
const watch = process.argv.includes('--watch')

await mkdir(out, { recursive: true })
await Promise.all(['index.html', 'app.css', 'favicon.svg'].map((f) => copyFile(path.join(src, f), path.join(out, f))))

/** @type {import('esbuild').BuildOptions} */
const options = {
  absWorkingDir: root,
  entryPoints: [path.join(src, 'main.tsx')],
  outfile: path.join(out, 'app.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022'],
  minify: true,
  sourcemap: 'linked',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  tsconfig: path.join(src, 'tsconfig.json'),
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
}

if (watch) {
  const ctx = await esbuild.context(options)
  await ctx.watch()
  console.log('build-viewer: watching src/viewer (index.html, app.css and favicon.svg are copied once)')
} else {
  const result = await esbuild.build(options)
  const bytes = result.metafile.outputs[path.relative(root, options.outfile)]?.bytes ?? 0
  console.log(`build-viewer: dist/viewer/app.js ${(bytes / 1024).toFixed(1)} KiB`)
}
