import { PulsarTransport } from '@babelqueue/pulsar';
import { killSockets } from '../lab.js';
import type { BrokerDriver } from './driver.js';
import websocket from './pulsar.js';

/** The lab standalone's binary-protocol service beside its web service. */
const service = (url: string) => `pulsar://${new URL(url).hostname}:6650`;

const driver: BrokerDriver = {
  ...websocket,
  name: 'pulsar-binary',
  description: 'Pulsar 4.0 standalone, consumers on the binary protocol (prefetching), publishing over the WebSocket API, Shared subscription',
  transport: (target) => new PulsarTransport({
    url: target.url,
    serviceUrl: service(target.url),
    consumerProtocol: 'binary',
    logger: target.logger,
    reconnect: { initialDelayMs: 100, maxDelayMs: 2000, multiplier: 2 },
  }),
  ports: (url) => [Number(new URL(url).port), 6650],
  cut: async (target) => {
    const web = await killSockets(Number(new URL(target.url).port));
    const binary = await killSockets(6650);
    return `ss -K: ${web} connection(s) to the web service, ${binary} to the binary service`;
  },
};

export default driver;
