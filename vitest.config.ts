import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Tests that spawn the built CLI need `npm run build` first (npm test does it).
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
})
