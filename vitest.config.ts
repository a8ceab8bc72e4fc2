import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    globalSetup: ['test/global-setup.ts'],
    // Tests that spawn processes and servers share two cores: keep the fan-out modest.
    maxWorkers: 4,
  },
});
