// The type of pgpass (no types published): looks up the password of ~/.pgpass (or PGPASSFILE) for a connection.
declare module 'pgpass' {
  interface ConnInfo {
    host?: string;
    port?: number | string;
    database?: string;
    user?: string;
  }
  function pgpass(connInfo: ConnInfo, cb: (password: string | undefined) => void): void;
  export default pgpass;
}
