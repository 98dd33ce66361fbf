// Connection URLs and client error texts carry credentials
// (`amqp://user:password@host`); nothing a binding logs or throws may print
// them. URLs go through `maskUrl`; a client's error text through these.

/** Replaces every occurrence of each secret, as given and URL-decoded, in `text` with `***`. */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret === undefined || secret === '') continue;
    for (const form of new Set([secret, safeDecode(secret)])) {
      if (form !== '') out = out.split(form).join('***');
    }
  }
  return out;
}

/** The secret a connection URL carries: its password, else a lone user-info token (a key or token as user name). */
export function urlSecret(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const secret = parsed.password !== '' ? parsed.password : parsed.username;
  return secret === '' ? undefined : secret;
}

/** Replaces the URL's password (or a lone user-info token) wherever it occurs in `text`. */
export function redactCredentials(text: string, url: string): string {
  return redactSecrets(text, [urlSecret(url)]);
}

/** A URL with its user-info replaced by `***` (`kafka://***@host`), for texts that may hold one. */
export function maskUserInfo(text: string): string {
  return text.replace(/\/\/[^@/?#]*@/, '//***@');
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
