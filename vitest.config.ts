import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Child processes, not worker threads: chDB (a native library) allows one data
    // directory per process, and several suites start brokers or spawn the CLI.
    pool: 'forks',
    // One test file at a time: the machine has 2 cores and the suites start brokers
    // (the librdkafka mock, containers) that would compete for them.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
