/**
 * How input paths are written in input-schema problems (EXTENSIONS.md 2 "Input schema"): as the
 * expression language writes them (`user.age`, `items[0].price`, `.["odd key"]`), and
 * `(root)` for the input as a whole.
 */
import { renderPath } from '../expr/render.js';

/** The path of a problem about the input as a whole. */
export const INPUT_ROOT_PATH = '(root)';

/** A field path as the expression language writes it; `(root)` for no segments. */
export function inputPathText(segments: readonly (string | number)[]): string {
  if (segments.length === 0) return INPUT_ROOT_PATH;
  return renderPath({ scope: 'input', segments });
}
