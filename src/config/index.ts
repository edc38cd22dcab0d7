// Public face of the configuration module.
export { defaultConfig, defaultValue, isLoopbackHost, loadConfig } from './load.ts';
export { CONFIG_FILE_ENV, CONFIG_KEYS, type KeySpec, type SettingPath } from './schema.ts';
export { readSecret, readStaticSessionToken, readTlsPassphrase } from './secret.ts';
export { SETTING_GROUPS, type SettingGroup } from './setting-spec.ts';
export type { Config, ConfigFlags } from './types.ts';
