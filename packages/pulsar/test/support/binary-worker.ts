// A consumer on Pulsar's binary protocol that takes messages and never
// finishes handling them: it prints one line per message it received
// (`got <base64 message id>`) and holds every delivery unsettled until the
// parent test kills it (SIGKILL). Arguments: <web service url> <binary service
// url> <queue> <concurrency>. It exits on its own after two minutes, so a
// parent that died never leaves it behind.
import { silentLogger } from '@babelqueue/core';
import { PulsarTransport, type PulsarDelivery } from '@babelqueue/pulsar';

const [url, serviceUrl, queue, concurrency] = process.argv.slice(2) as [string, string, string, string];

setTimeout(() => process.exit(3), 120_000);

const transport = new PulsarTransport({ url, serviceUrl, consumerProtocol: 'binary', logger: silentLogger });
await transport.consume(
  queue,
  async (delivery) => {
    process.stdout.write(`got ${(delivery as PulsarDelivery).messageId}\n`);
    await new Promise(() => undefined);
  },
  { concurrency: Number(concurrency), signal: new AbortController().signal },
);
