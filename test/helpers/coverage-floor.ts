/**
 * The coverage floor of src/ (`make coverage`, and CI's gate `make coverage-gate`): the figures of when it was set,
 * rounded down. A change that lowers coverage under it fails both. Today's figures are in docs/testing.md.
 */
export const COVERAGE_FLOOR = { lines: 91, branches: 81, functions: 90, statements: 89 } as const;
