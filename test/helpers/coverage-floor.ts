/**
 * The coverage floor of src/ (`make coverage`, and CI's gate `make coverage-gate`): the figures of when it was set,
 * rounded down. A change that lowers coverage under it fails both. Today's figures are in docs/testing.md.
 */
export const COVERAGE_FLOOR = { lines: 90, branches: 80, functions: 88, statements: 88 } as const;
