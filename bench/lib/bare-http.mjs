// The HTTP baseline: a bare fastify server (the same fastify as svc, default settings, default
// JSON body parser and serializer) with one POST route per path given that answers a constant
// JSON. Prints {"msg":"bare listening","url":...} on stdout; stops on SIGTERM.
//
//   node bench/lib/bare-http.mjs <file holding the JSON of {path: constant body}>
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const routes = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const app = Fastify({ logger: false });
for (const [path, body] of Object.entries(routes)) {
  app.post(path, (_req, reply) => {
    void reply.send(body);
  });
}
await app.listen({ host: '127.0.0.1', port: 0 });
const { port } = app.server.address();
process.stdout.write(`${JSON.stringify({ msg: 'bare listening', url: `http://127.0.0.1:${port}` })}\n`);
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
