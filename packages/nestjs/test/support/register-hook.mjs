// `node --import` this file (after tsx) to compile this package's TypeScript
// with decorator metadata; see typescript-hook.mjs.
import { register } from 'node:module';

register('./typescript-hook.mjs', import.meta.url);
