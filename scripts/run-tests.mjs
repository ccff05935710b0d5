// Collects every *.test.ts under test/ (or the paths given) and runs them with node:test
// through tsx, so node's own summary line closes the output.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function collect(path, out) {
  if (statSync(path).isDirectory()) {
    for (const entry of readdirSync(path).sort()) collect(join(path, entry), out);
  } else if (path.endsWith('.test.ts')) {
    out.push(path);
  }
  return out;
}

const args = process.argv.slice(2);
const roots = args.length > 0 ? args : ['test'];
const files = roots.flatMap((root) => collect(root, []));
if (files.length === 0) {
  console.error('run-tests: no test files found under', roots.join(', '));
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', '--test-timeout=180000', ...files], {
  stdio: 'inherit',
  env: { ...process.env, NODE_ENV: 'test' },
});
process.exit(result.status ?? 1);
