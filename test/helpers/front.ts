// A TCP front for the simulator that can be "down" (every connection reset at once) or "up" (passed through):
// a service that is down for a night and back for the restart, at an address that does not change.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface Front {
  url: string;
  setDown(down: boolean): void;
  close(): Promise<void>;
}

/** A front on a free loopback port for the service at `target` (http://127.0.0.1:PORT). */
export async function startFront(target: string): Promise<Front> {
  const port = Number(new URL(target).port);
  let down = false;
  const open = new Set<Socket>();
  const server: Server = createServer((sock) => {
    open.add(sock);
    sock.on('close', () => open.delete(sock));
    if (down) {
      sock.resetAndDestroy();
      return;
    }
    const up = connect(port, '127.0.0.1');
    open.add(up);
    up.on('close', () => open.delete(up));
    sock.pipe(up).pipe(sock);
    up.on('error', () => sock.destroy());
    sock.on('error', () => up.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  return {
    url,
    setDown(d) {
      down = d;
      if (d) for (const s of open) s.destroy();
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of open) s.destroy();
        server.close(() => r());
      }),
  };
}
