// Scratch (deleted after): raw vs transport.publish vs app.publish on the stand-in, CPU per message, alternating.
import { ServiceBusClient } from '@azure/service-bus';
import { silentLogger } from '@babelqueue/core';
import { AzureServiceBusTransport, toServiceBusMessage } from '@babelqueue/azure-service-bus';
import { benchApp, benchQueue, DATA, encoded, URN, windowed } from '../support/workload.js';
const CS = process.env.BABELQUEUE_ASB_URL!;
const N = Number(process.argv[2] ?? 10000);
const client = new ServiceBusClient(CS);
const q = benchQueue('asbab');
const transport = new AzureServiceBusTransport({ connectionString: CS, logger: silentLogger });
const app = benchApp(transport, q);
const sender = client.createSender(q);
const sides: Record<string, () => Promise<void>> = {
  raw: () => windowed(N, 100, (i) => { const { body, projection } = encoded(q, i); return sender.sendMessages(toServiceBusMessage(body, projection)); }),
  transport: () => windowed(N, 100, (i) => { const { body, projection } = encoded(q, i); return transport.publish({ queue: q, body, projection }); }),
  app: () => windowed(N, 100, (i) => app.publish(URN, { ...DATA, i })),
};
const results: Record<string, number[]> = { raw: [], transport: [], app: [] };
for (const f of Object.values(sides)) await f();
for (let r = 0; r < 3; r++) for (const [name, f] of Object.entries(sides)) {
  const c0 = process.cpuUsage();
  await f();
  const c = process.cpuUsage(c0);
  results[name]!.push((c.user + c.system) / N);
}
for (const [k, v] of Object.entries(results)) console.log(k, v.map((x) => x.toFixed(1)).join(' '));
await sender.close(); await client.close(); await app.close();
