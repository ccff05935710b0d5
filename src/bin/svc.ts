#!/usr/bin/env node
/**
 * svc: the command line for rule authors and CI (EXTENSIONS.md 2 "`svc` command"), on the
 * same engine as the server: test, lint, exec, eval, filter, diff, push, pull, replay. Exit codes: 0 done, 1 a rule,
 * test or server said no (for diff: there are changes), 2 usage error. Wiring only: the commands are in src/cli/.
 */
import { Command } from 'commander';
import { lintCommand, testCommand } from '../cli/authoring.js';
import { diffCommand, evalCommand, execCommand, filterCommand, pullCommand, pushCommand } from '../cli/commands.js';
import { replayCommand, type ReplayOptions } from '../cli/replay.js';
import { createProgram, runCli } from '../signing/cli-support.js';
import { initSvcCodec } from '../signing/index.js';

const program = createProgram('svc', 'Run, check and publish svc rules from the command line');
let run: () => Promise<number> = async () => 0;

program
  .command('test')
  .description('run the tests of every rule file, with coverage, as POST /api/v1/rulesets/:name/test would')
  .argument('<paths...>', 'rule files or directories')
  .option('--junit <file>', 'also write a JUnit XML report')
  .option('--min-coverage <percent>', 'fail when a file covers fewer of its branches (defaults included)')
  .action((paths: string[], opts: { junit?: string; minCoverage?: string }) => {
    run = async () => testCommand(paths, opts);
  });

program
  .command('lint')
  .description('validation problems and analysis warnings of every rule file')
  .argument('<paths...>', 'rule files or directories')
  .option('--strict', 'warnings fail too (as config.strict: true does)', false)
  .action((paths: string[], opts: { strict: boolean }) => {
    run = async () => lintCommand(paths, opts);
  });

program
  .command('exec')
  .description('execute a rule file on an input, as POST /api/v1/execute/:name would')
  .argument('<file>', 'rule file (.json, .yaml, .yml, .svc)')
  .requiredOption('--input <json>', 'the input: JSON text, or @file')
  .option('--trace', 'include the steps taken', false)
  .action((file: string, opts: { input: string; trace: boolean }) => {
    run = () => execCommand(file, opts);
  });

program
  .command('eval')
  .description('evaluate an expression, as POST /api/v1/eval would')
  .argument('<expression>', 'the expression')
  .option('--context <json>', 'the context: JSON text, or @file (default {})')
  .action((expression: string, opts: { context?: string }) => {
    run = () => evalCommand(expression, opts);
  });

program
  .command('filter')
  .description('turn a rule file and known input into a database filter, as POST /api/v1/rulesets/:name/filter would')
  .argument('<file>', 'rule file')
  .requiredOption('--known <json>', 'known_input: JSON text, or @file')
  .requiredOption('--target <codes...>', 'target result codes (repeat or comma-separate)')
  .option('--format <format>', 'sql, json or mongo (default sql)')
  .option('--field-mapping <json>', 'field_mapping: JSON text, or @file')
  .action((file: string, opts: { known: string; target: string[]; format?: string; fieldMapping?: string }) => {
    run = () => filterCommand(file, opts);
  });

program
  .command('diff')
  .description('structural and behavioural changes from one rule file to another, as POST /api/v1/rulesets/:name/diff would (exit 0 none, 1 some, 2 error)')
  .argument('<old>', 'the old rule file (.json, .yaml, .yml, .svc)')
  .argument('<new>', 'the new rule file')
  .option('--json', 'print the answer of the diff route ({changes, behavior}) instead of lines', false)
  .action((oldFile: string, newFile: string, opts: { json: boolean }) => {
    run = async () => diffCommand(oldFile, newFile, opts);
  });

const remote = (c: Command): Command =>
  c
    .requiredOption('--server <url>', 'the server, e.g. http://localhost:8080')
    .option('--token <token>', 'API key or JWT (default: the SVC_TOKEN variable, which keeps it off the process list)')
    .option('--tenant <id>', 'tenant (X-Tenant-ID)');

remote(
  program
    .command('push')
    .description('upload every rule file under the paths; stops at the first refusal and says why')
    .argument('<paths...>', 'rule files or directories'),
).action((paths: string[], opts: { server: string; token?: string; tenant?: string }) => {
  run = () => pushCommand(paths, opts);
});

remote(
  program.command('pull').description('write every ruleset of the server as <dir>/<name>.json').argument('<dir>', 'directory (created when missing)'),
).action((dir: string, opts: { server: string; token?: string; tenant?: string }) => {
  run = () => pullCommand(dir, opts);
});

remote(
  program
    .command('replay')
    .description('re-run the inputs of decision records on the server and report changed outcomes (exit 0 none, 1 some)')
    .argument('<path>', 'decision log directory (--decision-log) or one decisions-YYYY-MM-DD.jsonl file')
    .option(
      '--candidate <file>',
      "compare the current version with this rule file on the records of its ruleset (the impact route) instead of the recorded outcomes with the current version's",
    )
    .option('--ruleset <name>', 'only the records of this ruleset')
    .option('--max-batch-size <n>', 'inputs per request (default 1000; at most the server --max-batch-size)'),
).action((path: string, opts: ReplayOptions) => {
  run = () => replayCommand(path, opts);
});

await initSvcCodec();
await runCli(program, process.argv, () => run());
