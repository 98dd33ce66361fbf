import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigurationError, transportFromUrl } from '@babelqueue/core';
import { AzureServiceBusTransport, parseAddress } from '@babelqueue/azure-service-bus';

describe('Service Bus URLs, spelled as the Python SDK spells them', () => {
  test('a connection string is taken as is; the target shows only the host', () => {
    const cs = 'Endpoint=sb://orders.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=s3cr3t';
    assert.deepEqual(parseAddress(cs), { kind: 'connection-string', connectionString: cs, host: 'orders.servicebus.windows.net' });
    const transport = new AzureServiceBusTransport({ connectionString: cs });
    assert.equal(transport.target, 'sb://orders.servicebus.windows.net (connection string)');
    void transport.close();
  });

  test('sb://<keyName>:<key>@host is a shared access key; UseDevelopmentEmulator=true carries over', () => {
    const address = parseAddress('sb://send:a%2Fb%3D@127.0.0.1:5680?UseDevelopmentEmulator=true');
    assert.equal(address.kind, 'connection-string');
    assert.equal((address as { connectionString: string }).connectionString,
      'Endpoint=sb://127.0.0.1:5680/;SharedAccessKeyName=send;SharedAccessKey=a/b=;UseDevelopmentEmulator=true');
  });

  test('sb://namespace is a token credential; servicebus:// and azureservicebus:// too', () => {
    for (const scheme of ['sb', 'servicebus', 'azureservicebus']) {
      assert.deepEqual(parseAddress(`${scheme}://orders.servicebus.windows.net`), { kind: 'token', fullyQualifiedNamespace: 'orders.servicebus.windows.net', emulator: false });
    }
  });

  test('sb:// alone reads AZURE_SERVICEBUS_CONNECTION_STRING, and says so when it is not set', () => {
    const cs = 'Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=v';
    assert.equal(parseAddress('sb://', { AZURE_SERVICEBUS_CONNECTION_STRING: cs }).kind, 'connection-string');
    assert.throws(() => parseAddress('sb://', {}), /AZURE_SERVICEBUS_CONNECTION_STRING is not set/);
  });

  test('anything else is a configuration error that never echoes a key', () => {
    assert.throws(() => parseAddress('amqp://k:s3cr3t@host'), (e: Error) => e instanceof ConfigurationError && !e.message.includes('s3cr3t'));
    assert.throws(() => parseAddress('Endpoint=;SharedAccessKey=s3cr3t'), (e: Error) => e instanceof ConfigurationError && !e.message.includes('s3cr3t'));
  });

  test('the core registry builds the transport for sb://', async () => {
    const transport = await transportFromUrl('sb://k:v@orders.servicebus.windows.net');
    assert.ok(transport instanceof AzureServiceBusTransport, 'an AzureServiceBusTransport');
    assert.equal(transport.target, 'sb://orders.servicebus.windows.net (connection string)');
    await transport.close();
  });
});
