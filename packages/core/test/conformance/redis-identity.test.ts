import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EnvelopeCodec, withAttempts } from '@babelqueue/core';
import { suites } from './suite.js';

// The pure part of the Redis payload-identity block: the queue element is the
// envelope JSON itself, and nothing on our side rewrites it. The broker round
// trip is proven by the Redis binding's own suite.
for (const { suite, name, skip } of suites) {
  describe(`conformance redis payload identity: ${name}`, { skip }, () => {
    test('payload_identity', { skip: suite?.manifest.redis === undefined }, () => {
      const raw = suite!.fixture(suite!.manifest.redis!.payload_identity.envelope_file);
      const env = EnvelopeCodec.decode(raw);
      assert.ok(EnvelopeCodec.accepts(env), "EnvelopeCodec.accepts(env)");
      // Bytes in, the same bytes out: no wrapping, no added metadata.
      assert.deepEqual(withAttempts(raw, env.attempts), raw);
      // A body we produce survives encode → bytes → decode → encode unchanged.
      const made = EnvelopeCodec.encode(EnvelopeCodec.make(EnvelopeCodec.urn(env)!, env.data, { queue: env.meta.queue }));
      const element = Buffer.from(made, 'utf8');
      assert.equal(EnvelopeCodec.encode(EnvelopeCodec.decode(element) as never), made);
    });
  });
}
