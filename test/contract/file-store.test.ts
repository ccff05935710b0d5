/** Runs the store contract suite against `FileStore` in a temp rules dir. */
import { FileStore } from '../../src/store/file-store.js';
import { makeTempDir } from './store-fixtures.js';
import { runStoreContract } from './store-contract.js';

runStoreContract('FileStore', { history: true, files: true }, async ({ lock }) => {
  const { dir, cleanup } = await makeTempDir('svc-store-contract-');
  return { store: new FileStore({ rulesDir: dir, ...(lock ? { lock } : {}) }), cleanup };
});
