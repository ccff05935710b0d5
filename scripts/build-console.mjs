// Builds the web console (console/src, docs/console.md) into dist/console/: one minified script
// and one style sheet with content hashes in their names, and the index.html that loads them.
// esbuild bundles preact, dagre and yaml in; nothing is fetched when the page runs.
// `bash scripts/setup.sh` runs it after tsc; `node scripts/build-console.mjs` alone works too.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { build } from 'esbuild';

const root = resolve(import.meta.dirname, '..');
const out = join(root, 'dist', 'console');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const result = await build({
  entryPoints: [join(root, 'console', 'src', 'main.tsx')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  entryNames: '[name]-[hash]',
  outdir: out,
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
  define: { 'process.env.NODE_ENV': '"production"' },
});

const files = Object.keys(result.metafile.outputs).map((f) => basename(f));
const script = files.find((f) => f.endsWith('.js'));
const style = files.find((f) => f.endsWith('.css'));
if (script === undefined || style === undefined) throw new Error(`build-console: expected a .js and a .css output, got ${files.join(', ')}`);

writeFileSync(
  join(out, 'index.html'),
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/${style}">
<script type="module" src="/console/${script}"></script>
</head>
<body>
<div id="app"></div>
</body>
</html>
`,
);
console.error(`build-console: ${readdirSync(out).join(', ')}`);
