import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EnvelopeCodec, MemoryIdempotencyStore, idempotent } from '@babelqueue/core';
import { suites } from './suite.js';

for (const { suite, name, skip } of suites) {
  const block = suite?.manifest.idempotency;
  describe(`conformance idempotency: ${name}`, { skip: skip || (block === undefined ? 'no idempotency block' : false) }, () => {
    test('dedup_key: the seen-set is keyed on meta.id verbatim, not trace_id', async () => {
      const env = EnvelopeCodec.decode(suite!.fixture(block!.dedup_key.envelope_file));
      assert.ok(EnvelopeCodec.accepts(env), "EnvelopeCodec.accepts(env)");
      const remembered: string[] = [];
      const store = new MemoryIdempotencyStore();
      const spy = { seen: (id: string) => store.seen(id), remember: (id: string) => void remembered.push(id), forget: () => {} };
      await idempotent(() => 'ok', spy)(env.data, { id: env.meta.id });
      assert.deepEqual(remembered, [block!.dedup_key.expected_key]);
      assert.notEqual(env.trace_id, block!.dedup_key.expected_key);
    });

    for (const sequence of block?.sequences.cases ?? []) {
      test(`sequence ${sequence.name}`, async () => {
        const store = new MemoryIdempotencyStore();
        // The manifest counts every handler invocation ('run'), whatever its outcome.
        let effects = 0;
        let invoked = false;
        let outcome: 'ok' | 'throw' | undefined;
        const handler = idempotent(() => {
          invoked = true;
          effects++;
          if (outcome === 'throw') throw new Error('handler failed');
        }, store);
        for (const [i, delivery] of sequence.deliveries.entries()) {
          if (delivery.forget_before === true) store.forget(delivery.meta_id);
          invoked = false;
          outcome = delivery.outcome;
          const run = handler({}, { id: delivery.meta_id });
          if (delivery.outcome === 'throw') await assert.rejects(run, /handler failed/);
          else await run;
          assert.equal(invoked ? 'run' : 'skip', delivery.expect_effect, `delivery ${i}`);
        }
        assert.equal(effects, sequence.expected_effects);
      });
    }
  });
}
