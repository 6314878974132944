import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback stand-in for Secrets Manager's GetSecretValue (JSON 1.1 protocol: `POST /`, header
 * `x-amz-target: secretsmanager.GetSecretValue`, body `{"SecretId":…}`), reached by the real SDK through
 * `AWS_ENDPOINT_URL_SECRETS_MANAGER`. Secrets are set by id; an unknown id gets Secrets Manager's
 * `ResourceNotFoundException` (400).
 */
export interface SecretsManagerStub {
  /** `http://127.0.0.1:<port>`: the value for AWS_ENDPOINT_URL_SECRETS_MANAGER. */
  endpoint: string;
  /** SecretId -> SecretString (a string; set JSON with JSON.stringify). */
  secrets: Map<string, string>;
  /** SecretIds asked for, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** Starts the stand-in on a free loopback port. */
export async function startSecretsManagerStub(): Promise<SecretsManagerStub> {
  const secrets = new Map<string, string>();
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const { SecretId = '' } = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { SecretId?: string };
      requests.push(SecretId);
      const value = secrets.get(SecretId);
      res.writeHead(value === undefined ? 400 : 200, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(
        JSON.stringify(
          value === undefined
            ? { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." }
            : { ARN: SecretId, Name: SecretId.split(':').pop(), SecretString: value, VersionId: 'v1' },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    secrets,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
