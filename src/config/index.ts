/** Configuration: flag table, parser into a frozen `Config`, CLI entry helper. */
export { ConfigError, ConfigExit, helpText, parseConfig } from './config.js';
export type { Address, Config, LogLevel, ParseOptions, Role } from './config.js';
export { loadConfigOrExit } from './cli.js';
export type { CliIo } from './cli.js';
export { FLAGS, FLAG_GROUPS, camelOf, envNameOf, flagDef } from './flags.js';
export type { FlagDef, FlagGroup, FlagKind } from './flags.js';
