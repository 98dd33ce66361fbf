#!/usr/bin/env node
// The `babelqueue` command. This launcher is committed (dist/ is not), so npm
// links the command in a fresh clone before anything is built.
import('../dist/esm/bin.js').catch((error) => {
  if (error && error.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('bin.js')) {
    console.error('babelqueue: the CLI is not built yet; run "npm run build" first');
    process.exit(1);
  }
  throw error;
});
