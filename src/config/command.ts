/**
 * Builds the commander 14 command line of `svc-server` from the flag table. Commander parses
 * argv (long and short flags, `--flag=value`, unknown-flag errors with suggestions, `--help`,
 * `--version`); precedence, env variables and validation are ours, in `config.ts`.
 *
 * Boolean scheme: `--flag` alone means true; `--flag=false`, `--flag false` (also true/1/0/
 * yes/no) set it explicitly; `--no-flag` sets false. `--no-*` is listed in the help for the
 * options that default to true and accepted, unlisted, for the others.
 */
import { Command, Option } from 'commander';
import { FLAGS, FLAG_GROUPS, type FlagDef } from './flags.js';

/** The placeholder shown after a flag in the help, e.g. `<host:port>`. */
function placeholder(def: FlagDef): string {
  switch (def.kind.type) {
    case 'bool':
      return '[bool]';
    case 'address':
      return '<host:port>';
    case 'int':
    case 'number':
      return def.name.endsWith('port') ? '<port>' : '<n>';
    case 'enum':
      return `<${def.kind.choices.join('|')}>`;
    case 'list':
      return '<key,...>';
    case 'url':
      return '<url>';
    case 'text':
    case 'pattern':
      return def.path === true || /(dir|path|file|cert|key)$/.test(def.name) ? '<path>' : '<value>';
  }
}

/** The commander `Option`s of one flag (two for a boolean: `--flag [bool]` and `--no-flag`). */
function optionsOf(def: FlagDef): Option[] {
  const heading = `${def.group}:`;
  const flags = `${def.short ? `-${def.short}, ` : ''}--${def.name} ${placeholder(def)}`;
  // NOTE: `.env()` only documents the variable in the help. Commander would read
  // `process.env` itself; config.ts ignores every value whose source is not 'cli' and reads
  // the injected env, so precedence is explicit and testable.
  const option = new Option(flags, def.doc).env(def.env).helpGroup(heading);
  const shown = def.default ?? def.defaultText;
  if (shown !== undefined) option.default(shown, def.defaultText ?? def.default ?? undefined);
  if (def.kind.type !== 'bool') return [option];
  const negation = new Option(`--no-${def.name}`, `Same as --${def.name}=false.`).helpGroup(heading);
  if (def.default !== 'true') negation.hideHelp();
  return [option, negation];
}

/** A fresh commander program for `svc-server` (commander keeps parse state, so one per parse). */
export function buildCommand(version: string): Command {
  const program = new Command('svc-server')
    .description('svc rule evaluation service: HTTP, gRPC and Unix-socket server.')
    .version(version, '-V, --version', 'Print the version and exit.')
    .helpOption('-h, --help', 'Print this help and exit.')
    .allowExcessArguments(false)
    .exitOverride();
  const ordered = [...FLAGS].sort((a, b) => FLAG_GROUPS.indexOf(a.group) - FLAG_GROUPS.indexOf(b.group));
  for (const def of ordered) for (const option of optionsOf(def)) program.addOption(option);
  // Not an option of the server: an action, like --help (config.ts prints and exits).
  program.addOption(
    new Option('--print-config [format]', 'Print the effective configuration (each value and where it came from; secrets as ***) and exit.')
      .choices(['yaml', 'json'])
      .preset('yaml')
      .helpGroup('General:'),
  );
  program.addHelpText(
    'after',
    [
      '',
      'Every option can also be set by its SVC_* environment variable (shown as env:).',
      'A flag beats the variable, which beats the --config file, which beats the default.',
      'Booleans take true, false, 1, 0, yes, no;',
      '--flag alone means true and --no-flag means false. See docs/configuration.md.',
    ].join('\n'),
  );
  return program;
}
