// The floor of the HTTP stack: a bare `node:http` server (no framework) with one POST route per
// path given. It reads the body, parses it with JSON.parse (as any JSON route must) and answers
// the route's constant JSON with Content-Type and Content-Length. A route pattern may end in
// `/:param` (the last segment then matches any value). Prints
// {"msg":"bare listening","url":...} on stdout; stops on SIGTERM.
//
//   node bench/lib/bare-node-http.mjs <file holding the JSON of {path: constant body}>
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const routes = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const exact = new Map();
const prefixes = [];
for (const [path, body] of Object.entries(routes)) {
  const text = JSON.stringify(body);
  const answer = { text, length: Buffer.byteLength(text) };
  const colon = path.lastIndexOf('/:');
  if (colon >= 0) prefixes.push([path.slice(0, colon + 1), answer]);
  else exact.set(path, answer);
}

function route(url) {
  const hit = exact.get(url);
  if (hit !== undefined) return hit;
  for (const [prefix, answer] of prefixes) if (url.startsWith(prefix) && url.indexOf('/', prefix.length) < 0) return answer;
  return undefined;
}

const server = createServer((req, res) => {
  const answer = req.method === 'POST' ? route(req.url) : undefined;
  if (answer === undefined) {
    res.writeHead(404, { 'content-type': 'application/json; charset=utf-8', 'content-length': 2 });
    res.end('{}');
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    try {
      JSON.parse(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json; charset=utf-8', 'content-length': 2 });
      res.end('{}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': answer.length });
    res.end(answer.text);
  });
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  process.stdout.write(`${JSON.stringify({ msg: 'bare listening', url: `http://127.0.0.1:${port}` })}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
