import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SchemaValidator } from '@babelqueue/core';
import { sharedConformance } from '../support/paths.js';

const ANNOTATIONS = new Set(['description', 'examples', 'title', '$comment']);

/** The schema with annotation keywords removed: what remains is what validates. */
function constraints(schema: unknown, inProperties = false): unknown {
  if (Array.isArray(schema)) return schema.map((item) => constraints(item));
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    // Under "properties" the keys are member names, not keywords.
    if (!inProperties && ANNOTATIONS.has(key)) continue;
    out[key] = constraints(value, !inProperties && key === 'properties');
  }
  return out;
}

describe('bundled envelope schema', { skip: sharedConformance === undefined ? 'no ../shared/conformance' : false }, () => {
  test('validates exactly what the shared canonical schema validates', () => {
    const shared = JSON.parse(readFileSync(join(sharedConformance!, 'schema/message-envelope.schema.json'), 'utf8'));
    assert.deepEqual(constraints(SchemaValidator.schema), constraints(shared));
  });
});
