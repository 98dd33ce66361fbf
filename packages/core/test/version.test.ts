import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VERSION } from '@babelqueue/core';

test('exports a version', () => {
  assert.equal(VERSION, '0.1.0');
});
