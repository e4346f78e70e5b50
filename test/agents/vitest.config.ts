import { defineConfig } from 'vitest/config'

// The agent suite (npm run test:agents): real agent binaries, so long timeouts, one file, one process.
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/agents/**/*.test.ts'],
    globalSetup: ['test/agents/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 900_000,
    pool: 'forks',
    fileParallelism: false,
  },
})
