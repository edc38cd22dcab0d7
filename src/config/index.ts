// Public face of the configuration module.
export { isLoopbackHost, loadConfig } from './load.ts';
export { CONFIG_FILE_ENV, CONFIG_KEYS, type KeySpec } from './schema.ts';
export { readSecret, readStaticSessionToken, readTlsPassphrase } from './secret.ts';
export type { Config, ConfigFlags } from './types.ts';
