import { ConfigurationError, maskUrl } from '@babelqueue/core';

/** The URL schemes the Python SDK accepts for Service Bus. */
export const ASB_SCHEMES = ['sb:', 'servicebus:', 'azureservicebus:'] as const;

/** How a URL or connection string reaches the namespace. */
export type AsbAddress =
  | { readonly kind: 'connection-string'; readonly connectionString: string; readonly host: string }
  | { readonly kind: 'token'; readonly fullyQualifiedNamespace: string; readonly emulator: boolean };

/**
 * Reads a connection string (`Endpoint=sb://…;…`) or a URL spelled as the
 * Python SDK spells it (see {@link AzureServiceBusTransportOptions.url}).
 * `sb://` alone reads `AZURE_SERVICEBUS_CONNECTION_STRING`, like the Python SDK.
 */
export function parseAddress(value: string, env: NodeJS.ProcessEnv = process.env): AsbAddress {
  const text = value.trim();
  if (/^endpoint=/i.test(text) || /;\s*endpoint=/i.test(text)) return fromConnectionString(text);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigurationError('not an Azure Service Bus URL or connection string (expected sb://<namespace>.servicebus.windows.net or Endpoint=sb://…;SharedAccessKeyName=…;SharedAccessKey=…)');
  }
  if (!(ASB_SCHEMES as readonly string[]).includes(url.protocol)) {
    throw new ConfigurationError(`an Azure Service Bus URL starts with sb://, servicebus:// or azureservicebus://, got ${maskUrl(text)}`);
  }
  const emulator = [...url.searchParams].some(([k, v]) => k.toLowerCase() === 'usedevelopmentemulator' && v.toLowerCase() === 'true');
  if (url.hostname === '') {
    const fromEnv = env.AZURE_SERVICEBUS_CONNECTION_STRING;
    if (fromEnv === undefined || fromEnv.trim() === '') {
      throw new ConfigurationError(`${url.protocol}// names no namespace and AZURE_SERVICEBUS_CONNECTION_STRING is not set`);
    }
    return fromConnectionString(fromEnv.trim());
  }
  const host = url.port === '' ? url.hostname : `${url.hostname}:${url.port}`;
  if (url.username !== '' || url.password !== '') {
    if (url.username === '' || url.password === '') throw new ConfigurationError(`a shared access key URL needs both the key name and the key: ${maskUrl(text)}`);
    const parts = [`Endpoint=sb://${host}/`, `SharedAccessKeyName=${decodeURIComponent(url.username)}`, `SharedAccessKey=${decodeURIComponent(url.password)}`];
    if (emulator) parts.push('UseDevelopmentEmulator=true');
    return { kind: 'connection-string', connectionString: parts.join(';'), host };
  }
  return { kind: 'token', fullyQualifiedNamespace: host, emulator };
}

function fromConnectionString(connectionString: string): AsbAddress {
  const endpoint = /(?:^|;)\s*endpoint=([^;]*)/i.exec(connectionString)?.[1];
  if (endpoint === undefined || endpoint.trim() === '') throw new ConfigurationError('the connection string has no Endpoint=sb://…');
  const host = endpoint.trim().replace(/^[a-z]+:\/\//i, '').replace(/\/.*$/, '');
  return { kind: 'connection-string', connectionString, host };
}

/** What a log line shows of an address: scheme and host, never a key or token. */
export function describeAddress(address: AsbAddress): string {
  return address.kind === 'connection-string'
    ? `sb://${address.host} (connection string)`
    : `sb://${address.fullyQualifiedNamespace} (token credential)`;
}

