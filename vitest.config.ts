import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  resolve: {
    // Vite's resolver does not find chrono-node's `./*` export pattern ("Cannot find package 'chrono-node/en'"), which
    // Node, TypeScript and esbuild read: the English parser's ES module, named as that pattern resolves it.
    alias: [
      {
        find: /^chrono-node\/en$/,
        replacement: fileURLToPath(new URL('./node_modules/chrono-node/dist/esm/locales/en/index.js', import.meta.url)),
      },
    ],
  },
  test: {
    include: ['src/**/*.test.ts'],
    // Tests that spawn the built CLI need `npm run build` first (npm test does it).
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
})
