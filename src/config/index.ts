// Public face of the configuration module.
export { defaultValue, isLoopbackHost, loadConfig } from './load.ts';
export { CONFIG_FILE_ENV, CONFIG_KEYS, type KeySpec, SETTING_GROUPS, type SettingGroup } from './schema.ts';
export { readSecret, readStaticSessionToken, readTlsPassphrase } from './secret.ts';
export type { Config, ConfigFlags } from './types.ts';
