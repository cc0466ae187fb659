/** Types for `pgpass` (the password-file reader node-postgres uses; it ships none). */
declare module 'pgpass' {
  interface ConnInfo { host?: string; port?: number | string; database?: string; user?: string }
  /** Calls back with the password of the first matching line of PGPASSFILE or ~/.pgpass, or undefined. */
  function pgpass(connInfo: ConnInfo, cb: (password: string | undefined) => void): void;
  export default pgpass;
}
