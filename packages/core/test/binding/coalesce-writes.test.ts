import assert from 'node:assert/strict';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { coalesceWrites, writeInOnePass } from '@babelqueue/core/binding';

/** A writable that records each call of its write path: one entry per write the socket would make. */
function recorder() {
  const writes: string[][] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      writes.push([chunk.toString()]);
      done();
    },
    writev(chunks, done) {
      writes.push(chunks.map((c) => String(c.chunk)));
      done();
    },
  });
  return { stream, writes };
}

/** Past the nextTick that ends a run of callbacks. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('coalesceWrites', () => {
  it('a lone write of a run of callbacks leaves at once, uncorked', async () => {
    const { stream, writes } = recorder();
    coalesceWrites(stream);
    stream.write('a');
    assert.deepEqual(writes, [['a']]);
    await nextTurn();
    assert.equal(stream.writableCorked, 0);
  });

  it('the writes after the first in one run of callbacks leave together once it ends; the next run starts afresh', async () => {
    const { stream, writes } = recorder();
    for (const text of ['a', 'b', 'c', 'd']) {
      coalesceWrites(stream);
      stream.write(text);
    }
    assert.deepEqual(writes, [['a']], 'only the first left during the run');
    await nextTurn();
    assert.deepEqual(writes, [['a'], ['b', 'c', 'd']], 'the rest in one write');
    assert.equal(stream.writableCorked, 0);
    coalesceWrites(stream);
    stream.write('e');
    assert.deepEqual(writes.at(-1), ['e'], 'a new run: the first write leaves at once');
  });

  it('over a real socket, every byte arrives in order', async () => {
    let received = '';
    const server = createServer((s) => s.on('data', (d) => (received += d.toString())));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const socket: Socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const expected = Array.from({ length: 50 }, (_, i) => `<${i}>`);
    for (const text of expected) {
      coalesceWrites(socket);
      socket.write(text);
    }
    const deadline = Date.now() + 10_000;
    while (received.length < expected.join('').length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    socket.destroy();
    server.close();
    assert.equal(received, expected.join(''));
  });
});

describe('writeInOnePass', () => {
  it('the writes of one pass leave in one write when it ends, and its result comes back', () => {
    const { stream, writes } = recorder();
    const result = writeInOnePass(stream, () => {
      for (const text of ['a', 'b', 'c']) stream.write(text);
      assert.deepEqual(writes, [], 'nothing leaves during the pass');
      return 'done';
    });
    assert.equal(result, 'done');
    assert.deepEqual(writes, [['a', 'b', 'c']]);
    assert.equal(stream.writableCorked, 0);
  });

  it('a pass that throws still uncorks: what it wrote leaves, and the error goes to the caller', () => {
    const { stream, writes } = recorder();
    assert.throws(() => writeInOnePass(stream, () => {
      stream.write('a');
      throw new Error('the pass failed');
    }), /the pass failed/);
    assert.deepEqual(writes, [['a']]);
    assert.equal(stream.writableCorked, 0);
  });

  it('no socket, or a destroyed one: the pass runs as it is', () => {
    assert.equal(writeInOnePass(undefined, () => 1), 1);
    const { stream } = recorder();
    stream.destroy();
    let corked = false;
    const watched = Object.assign(stream, { cork: () => (corked = true) });
    assert.equal(writeInOnePass(watched, () => 2), 2);
    assert.equal(corked, false, 'a destroyed socket is not corked');
  });
});
