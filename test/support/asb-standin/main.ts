// Runs the Service Bus stand-in: `node --import tsx test/support/asb-standin/main.ts --port 5680`.
// Started by `scripts/brokers up asb`; a test fixture, never shipped.
import { parseArgs } from 'node:util';
import { startStandIn } from './server.js';

const { values } = parseArgs({ options: { host: { type: 'string', default: '127.0.0.1' }, port: { type: 'string', default: '5680' } } });
const standIn = await startStandIn({ host: values.host, port: Number(values.port) });
process.stderr.write(`asb-standin: listening on ${values.host}:${standIn.port} (a Service Bus stand-in for tests, not Service Bus)\n`);
const stop = () => {
  void standIn.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
