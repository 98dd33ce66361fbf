import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Socket } from 'node:net';
import type { EventContext } from 'rhea';
import { writeFramesTogether } from '../src/frame-writes.js';
import { countSystemWrites } from '../../../test/support/system-writes.js';
import { artemis, Raw, uniqueQueue } from './support/artemis.js';

describe('Artemis frames of one output pass leave in one write', { skip: artemis.skip }, () => {
  it('forty sends made in one tick reach the socket as one or two writes, and all forty are accepted intact', async () => {
    const raw = await Raw.open();
    const queue = uniqueQueue('bq-frame-writes');
    try {
      writeFramesTogether(raw.connection);
      const sender = raw.connection.open_sender({ target: { address: queue, capabilities: ['queue'] } });
      await new Promise((resolve) => sender.once('sendable', resolve));
      const { credit } = sender as unknown as { credit: number }; // rhea's, untyped
      assert.ok(credit >= 40, `the broker gave ${credit} credit`);
      const accepted = new Set<unknown>();
      const allAccepted = new Promise<void>((resolve) => sender.on('accepted', (context: EventContext) => {
        accepted.add(context.delivery);
        if (accepted.size === 40) resolve();
      }));
      const socket = (raw.connection as unknown as { socket: Socket }).socket;
      const writes = countSystemWrites((each) => each === socket);
      try {
        for (let i = 0; i < 40; i++) sender.send({ durable: true, body: `{"i":${i}}` });
        await allAccepted;
      } finally {
        writes.stop();
      }
      // rhea writes every transfer frame by itself: forty system calls without the cork.
      assert.ok(writes.count <= 2, `${writes.count} writes for forty transfers`);
      sender.close();
      const bodies = (await raw.take(queue)).map((taken) => taken.body.toString());
      assert.deepEqual(bodies, Array.from({ length: 40 }, (_, i) => `{"i":${i}}`));
    } finally {
      await raw.cleanup(queue);
      await raw.close();
    }
  });
});
