// A loopback door in front of a server (the simulator): each request goes on to it once the door lets it through, so
// a test decides when requests reach the service instead of the machine's load deciding it — every POST held until
// something has happened (heldDoor), or POSTs let through together (burstDoor). Answers come back as the server
// gives them; other methods (the health check) go straight through. front.ts is the TCP one: a service down or up.
import { createServer, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Door {
  /** The door's base URL: the one to give the CLI (and its plan) instead of the server's. */
  url: string;
  close(): Promise<void>;
}

/** Forwards each request to `target` once `gate(req)` has resolved. */
export async function startDoor(
  target: string,
  gate: (req: IncomingMessage) => Promise<void>,
): Promise<Door> {
  const server = createServer((req, res) => {
    void gate(req).then(() => {
      const up = request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Holds every POST until `open()`.
 * @example const door = await heldDoor(sim.url); …; door.open()
 */
export async function heldDoor(target: string): Promise<Door & { open(): void }> {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const door = await startDoor(target, (req) => (req.method === 'POST' ? opened : Promise.resolve()));
  return { ...door, open };
}

/**
 * Lets POSTs through `size` at a time, all at once; those left (fewer than `size`) once none has come for `idleMs`.
 * @example const door = await burstDoor(sim.url, 8) // a run at concurrency 8: its answers come back together
 */
export async function burstDoor(target: string, size: number, idleMs = 50): Promise<Door> {
  let waiting: Array<() => void> = [];
  let idle: NodeJS.Timeout | undefined;
  const release = () => {
    clearTimeout(idle);
    for (const go of waiting) go();
    waiting = [];
  };
  return startDoor(target, (req) => {
    if (req.method !== 'POST') return Promise.resolve();
    return new Promise<void>((resolve) => {
      waiting.push(resolve);
      clearTimeout(idle);
      if (waiting.length >= size) release();
      else idle = setTimeout(release, idleMs);
    });
  });
}
