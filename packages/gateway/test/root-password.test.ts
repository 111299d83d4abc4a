// The generated root password is shown the moment root is created: a start
// that then fails (here its port is taken) must not have made a password
// that nobody ever saw.
import { mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadGatewayConfig, startGateway } from '../src/index.js';

describe('root password', () => {
  it('is printed when root is created, before a listen that fails', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    const config = loadGatewayConfig(
      { LOCAL_MODELS: 'off' },
      { host: '127.0.0.1', port, dataDir: mkdtempSync(join(tmpdir(), 'kbchat-root-')), databaseUrl: 'pglite:memory', retestIntervalMs: 0 },
    );
    const logged: string[] = [];
    try {
      await expect(startGateway(config, (line) => logged.push(line))).rejects.toThrow(/EADDRINUSE/);
    } finally {
      taken.close();
    }
    expect(logged.join('\n')).toMatch(/root user created; password \(shown once\): \S{12,}/);
  });
});
